import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { masked, serializeError } from './log-errors.js'
import { loggerOptions } from './logger.js'

/** An error as pg-pool hands it to a pool's 'error' listener: a server message with the client attached. */
class DatabaseError extends Error {}

function terminatedIdleConnection(): Error {
  return Object.assign(new DatabaseError('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
    routine: 'ProcessInterrupts',
    client: {
      user: 'order_service',
      database: 'order_service',
      host: '10.0.0.7',
      processID: 4242,
      secretKey: 987654321,
      connectionParameters: { user: 'order_service', host: '10.0.0.7' },
    },
  })
}

/** What a logger made with the services' options writes for `fields`, parsed. */
function logged(fields: Record<string, unknown>): Record<string, unknown> {
  let line = ''
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      line += chunk.toString()
      done()
    },
  })
  pino(loggerOptions('kit', 'info'), sink).warn(fields, 'something failed')
  return JSON.parse(line) as Record<string, unknown>
}

describe('serializeError', () => {
  it('when pg attaches its client to an error, then the line keeps type, message and code and nothing of the client', () => {
    const line = logged({ err: terminatedIdleConnection() })
    expect(line.err).toEqual({
      type: 'DatabaseError',
      message: 'terminating connection due to administrator command',
      code: '57P01',
    })
    const text = JSON.stringify(line)
    for (const internal of [
      'client',
      'processID',
      'secretKey',
      '4242',
      '987654321',
      '10.0.0.7',
      'order_service',
    ])
      expect(text).not.toContain(internal)
  })

  it('when an error has no code (a bug), then its stack is kept', () => {
    const line = logged({ err: new TypeError('x is not a function') })
    expect(line.err).toMatchObject({ type: 'TypeError', message: 'x is not a function' })
    expect((line.err as { stack: string }).stack).toContain('TypeError: x is not a function\n    at ')
  })

  it('when a URL could not be parsed, then the URL it carries (password included) is left out', () => {
    let error: unknown
    try {
      new URL('postgresql://u:S3cretPass@127.0.0.1:99999/db')
    } catch (caught) {
      error = caught
    }
    expect(JSON.stringify(logged({ err: error }))).not.toContain('S3cretPass')
    expect(logged({ err: error }).err).toEqual({
      type: 'TypeError',
      message: 'Invalid URL',
      code: 'ERR_INVALID_URL',
    })
  })

  it('when errors are nested (cause, AggregateError), then each is reduced the same way', () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), {
        code: 'ECONNREFUSED',
        address,
        port: 5432,
      })
    const aggregate = new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432')], '')
    const outer = new Error('cannot reach the database', { cause: aggregate })
    const err = serializeError(outer) as { cause: { errors: unknown[] } }
    expect(err.cause.errors).toEqual([
      { type: 'Error', message: 'connect ECONNREFUSED ::1:5432', code: 'ECONNREFUSED' },
      { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' },
    ])
  })

  it('when a message holds a URL with a password, then the password is masked', () => {
    expect(masked('connect amqp://guest:S3cret@127.0.0.1:5672/saga failed')).toBe(
      'connect amqp://guest:***@127.0.0.1:5672/saga failed',
    )
    expect(serializeError(new Error('bad postgresql://u:p@ss@h/db'))).toMatchObject({
      message: 'bad postgresql://u:***@h/db',
    })
  })

  it('when the value is not an Error, then a string stays as it is and an object with a message keeps message and code', () => {
    expect(serializeError('broker closed the channel')).toBe('broker closed the channel')
    expect(serializeError({ message: 'nack', code: 406, channel: { huge: true } })).toEqual({
      type: 'Object',
      message: 'nack',
      code: 406,
    })
  })
})
