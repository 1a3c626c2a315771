import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { EnvError, parseEnv, serviceEnvSchema, shownValue } from './env.js'

const schema = serviceEnvSchema({ service: 'inventory', port: 3003 }).extend({
  SEED_CATALOGUE: z.stringbool().default(false),
})

describe('parseEnv', () => {
  it('when nothing is set, then every variable takes its documented default', () => {
    const config = parseEnv(schema, {})
    expect(config.PORT).toBe(3003)
    expect(config.HOST).toBe('0.0.0.0')
    expect(config.AMQP_QUEUE_PREFIX).toBe('inventory')
    expect(config.DATABASE_URL).toBe(
      'postgresql://inventory_service:inventory_service@127.0.0.1:5432/inventory_service',
    )
    expect(config.MIGRATE_ON_START).toBe(true)
    expect(config.SEED_CATALOGUE).toBe(false)
  })

  it('when ADMIN_TOKEN is empty (Compose passes an unset one so), then it is unset; shorter than 16, then it is refused unquoted', () => {
    expect(parseEnv(schema, { ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined()
    expect(parseEnv(schema, {}).ADMIN_TOKEN).toBeUndefined()
    expect(parseEnv(schema, { ADMIN_TOKEN: 'sixteen-chars-ok' }).ADMIN_TOKEN).toBe('sixteen-chars-ok')
    expect(() => parseEnv(schema, { ADMIN_TOKEN: 'too-short' })).toThrow(EnvError)
    expect(() => parseEnv(schema, { ADMIN_TOKEN: 'too-short' })).not.toThrow(/too-short/)
  })

  it('when a boolean is "false", then it parses as false (not as a truthy string)', () => {
    const config = parseEnv(schema, { MIGRATE_ON_START: 'false', SEED_CATALOGUE: 'true' })
    expect(config.MIGRATE_ON_START).toBe(false)
    expect(config.SEED_CATALOGUE).toBe(true)
  })

  it('when several variables are bad, then the error names each, with the value received where it holds no secret', () => {
    const quoted = { PORT: 'eighty', MIGRATE_ON_START: 'perhaps', OUTBOX_BATCH_SIZE: '-1' }
    const bad = { ...quoted, AMQP_URL: 'http://guest:S3cretPass@nope' }
    let caught: unknown
    try {
      parseEnv(schema, bad)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(EnvError)
    const error = caught as EnvError
    expect(error.issues.map((i) => i.variable).sort()).toEqual(Object.keys(bad).sort())
    for (const [name, value] of Object.entries(quoted)) {
      expect(error.message).toContain(`${name}: `)
      expect(error.message).toContain(JSON.stringify(value))
    }
    expect(error.message).toContain('AMQP_URL: the scheme is http://, expected amqp:// or amqps://')
    expect(error.message).not.toContain('S3cretPass')
    expect(JSON.stringify(error.issues)).not.toContain('S3cretPass')
  })

  it('when AMQP_URL lists three nodes, then it parses as given; a bad second node is named without its password', () => {
    const nodes = [1, 2, 3].map((n) => `amqp://guest:S3cretPass@rabbit-${n}:5672`).join(',')
    expect(parseEnv(schema, { AMQP_URL: nodes }).AMQP_URL).toBe(nodes)
    const error = parseEnvError({
      AMQP_URL: nodes.replace('amqp://guest:S3cretPass@rabbit-2', 'amqx://guest:S3cretPass@rabbit-2'),
    })
    expect(error.message).toContain(
      'AMQP_URL: URL 2 of 3: the scheme is amqx://, expected amqp:// or amqps://',
    )
    expect(error.message).not.toContain('S3cretPass')
  })

  it('when a URL is pasted into a variable that is not URL-shaped, then its value is not quoted', () => {
    const error = parseEnvError({ PORT: 'postgresql://u:S3cretPass@db:5432/x', LOG_LEVEL: 'u:S3cretPass@db' })
    expect(error.message).toContain('PORT: ')
    expect(error.message).toContain('LOG_LEVEL: ')
    expect(error.message).not.toContain('S3cretPass')
  })
})

describe('shownValue', () => {
  it.each([
    ['PORT', 'eighty', 'eighty'],
    ['DATABASE_URL', 'nope', undefined],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'nope', undefined],
    ['CARRIER_ACCOUNT', 'acct', undefined],
    ['SOME_API_TOKEN', 'abc', undefined],
    ['LOG_LEVEL', 'user@host', undefined],
    ['LOG_LEVEL', 'x'.repeat(65), undefined],
    ['LOG_LEVEL', undefined, undefined],
  ])('when %s is %j, then it is shown as %j', (variable, value, shown) => {
    expect(shownValue(variable, value)).toBe(shown)
  })
})

function parseEnvError(env: Record<string, string>): EnvError {
  try {
    parseEnv(schema, env)
  } catch (error) {
    if (error instanceof EnvError) return error
    throw error
  }
  throw new Error('parseEnv accepted a bad environment')
}
