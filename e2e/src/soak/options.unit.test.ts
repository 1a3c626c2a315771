import { describe, expect, it } from 'vitest'
import { soakOptions, soakProgram } from './options.js'
import { DEFAULT_FAULTS } from './schedule.js'

/** Parses `args` as `npm run soak --` would; a usage error throws commander's error instead of exiting. */
const parsed = (...args: string[]) =>
  soakOptions(
    soakProgram()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .parse(args, { from: 'user' })
      .opts(),
  )

describe('npm run soak options', () => {
  it('when no option is given, then the documented defaults apply', () => {
    expect(parsed()).toMatchObject({
      durationS: 600,
      ratePerS: 8,
      cancelShare: 0.15,
      faults: DEFAULT_FAULTS,
      gapS: { min: 8, max: 20 },
      settleS: 180,
      logLevel: 'warn',
      keepLogs: false,
    })
  })

  it('when options are given, then each is read, fractions of minutes included', () => {
    expect(
      parsed(
        '--minutes',
        '0.5',
        '--seed',
        '42',
        '--faults',
        'kill,queue-delete',
        '--gap',
        '2-3',
        '--keep-logs',
      ),
    ).toMatchObject({
      durationS: 30,
      seed: 42,
      faults: ['kill', 'queue-delete'],
      gapS: { min: 2, max: 3 },
      keepLogs: true,
    })
  })

  it('when a value is out of range or not understood, then it is a usage error naming the option', () => {
    for (const [args, option] of [
      [['--rate', '500'], '--rate <n>'],
      [['--cancel', '1.5'], '--cancel <share>'],
      [['--minutes', 'abc'], '--minutes <n>'],
      [['--seed', '1.5'], '--seed <n>'],
      [['--gap', '20-8'], '--gap <min-max>'],
      [['--faults', 'kil'], '--faults <list>'],
    ] as const) {
      expect(() => parsed(...args), args.join(' ')).toThrow(`option '${option}' argument`)
    }
  })

  it('when the help is read, then it lists every option and the fault menu, without internal notes', () => {
    let help = ''
    soakProgram()
      .configureOutput({ writeOut: (text) => void (help += text) })
      .outputHelp()
    for (const option of soakProgram().options) expect(help).toContain(option.long)
    expect(help).toContain('The fault menu')
    expect(help).not.toMatch(/issue \d+/i)
  })
})
