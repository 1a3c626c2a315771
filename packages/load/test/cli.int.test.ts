import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { loadProgram, loadSettings } from '../src/settings.js'

const run = promisify(execFile)
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url))

/** Runs the built load CLI; resolves with its exit code and output whatever the code. */
const load = (...args: string[]) =>
  run(process.execPath, [cli, ...args], { timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )

describe('npm run load', () => {
  it('when --help or -h is given, then the help goes to stdout with every option and no internal note, exit 0', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await load(flag)
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toMatch(/^Usage: npm run load -- \[options\]/)
      for (const option of loadProgram().options) expect(result.stdout).toContain(option.long)
      expect(result.stdout).not.toMatch(/issue \d+/i)
    }
  })

  it('when an option is mistyped, a value does not parse, or two modes are given, then one line and a hint on stderr, exit 2', async () => {
    for (const [args, message] of [
      [['--rat', '5'], "error: unknown option '--rat' (did you mean --rate?)"],
      [['--rate', 'abc'], "error: option '--rate <n>' argument 'abc' is invalid. expected a number above 0"],
      [
        ['--seconds', '-3'],
        "error: option '--seconds <n>' argument '-3' is invalid. expected a number above 0",
      ],
      [['--step', '--overload'], "error: option '--step' cannot be used with option '--overload'"],
      [['50'], 'error: too many arguments. Expected 0 arguments but got 1: 50.'],
    ] as const) {
      expect(await load(...args)).toMatchObject({
        code: 2,
        stdout: '',
        stderr: `${message}\nRun 'npm run load -- --help' for usage.\n`,
      })
    }
  })

  it('when options are parsed, then overload offers twice the rate for 60 s unless --seconds says otherwise', () => {
    const settings = (...args: string[]) =>
      loadSettings(loadProgram().parse(args, { from: 'user' }).opts(), { DATABASE_PREFIX: 'p_' })
    expect(settings('--overload', '--rate', '10')).toMatchObject({ mode: 'overload', rate: 20, seconds: 60 })
    expect(settings('--overload', '--rate', '10', '--seconds', '5')).toMatchObject({ seconds: 5 })
    expect(settings()).toMatchObject({
      mode: 'steady',
      rate: 20,
      seconds: 20,
      acceptP99Ms: 50,
      drainTimeoutMs: 120_000,
    })
    expect(settings().databases).toEqual([
      'p_order_service',
      'p_payment_service',
      'p_inventory_service',
      'p_shipment_service',
    ])
  })
})
