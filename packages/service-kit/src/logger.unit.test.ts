import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { chooseLogFormat, loggerOptions, prettyTarget } from './logger.js'

describe('the log format', () => {
  it('when LOG_FORMAT is unset, then a terminal gets pretty lines and anything else JSON', () => {
    expect(chooseLogFormat(undefined, true, true)).toEqual({ format: 'pretty' })
    expect(chooseLogFormat(undefined, false, true)).toEqual({ format: 'json' })
  })

  it('when LOG_FORMAT is set, then it wins over the terminal', () => {
    expect(chooseLogFormat('json', true, true)).toEqual({ format: 'json' })
    expect(chooseLogFormat('pretty', false, true)).toEqual({ format: 'pretty' })
  })

  it('when pino-pretty is not installed (the runtime image), then JSON, with a warning only if pretty was asked for', () => {
    expect(chooseLogFormat(undefined, true, false)).toEqual({ format: 'json', warning: undefined })
    expect(chooseLogFormat('pretty', false, false)).toEqual({
      format: 'json',
      warning: expect.stringContaining('pino-pretty is not installed') as string,
    })
  })

  it('when pretty, then pino writes through the installed pino-pretty transport; JSON has no transport', () => {
    expect(prettyTarget()).toMatch(/pino-pretty/)
    expect(loggerOptions('kit', 'info', 'pretty').transport).toMatchObject({ target: prettyTarget() })
    expect(loggerOptions('kit', 'info').transport).toBeUndefined()
  })
})

describe('credentials in logs', () => {
  it('when a request with a bearer token and a cookie is logged, then both are redacted', () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const logger = pino(loggerOptions('kit', 'info'), sink)
    const token = 'admin-token-that-must-not-leak'
    logger.info({ req: { headers: { authorization: `Bearer ${token}`, cookie: 's=1' } } }, 'request')
    expect(lines.join('')).not.toContain(token)
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } },
    })
  })
})
