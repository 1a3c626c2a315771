import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { EnvError, parseEnv, serviceEnvSchema } from './env.js'

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

  it('when a boolean is "false", then it parses as false (not as a truthy string)', () => {
    const config = parseEnv(schema, { MIGRATE_ON_START: 'false', SEED_CATALOGUE: 'true' })
    expect(config.MIGRATE_ON_START).toBe(false)
    expect(config.SEED_CATALOGUE).toBe(true)
  })

  it('when several variables are bad, then the error names each with the value received', () => {
    const bad = {
      PORT: 'eighty',
      AMQP_URL: 'http://nope',
      MIGRATE_ON_START: 'perhaps',
      OUTBOX_BATCH_SIZE: '-1',
    }
    let caught: unknown
    try {
      parseEnv(schema, bad)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(EnvError)
    const error = caught as EnvError
    expect(error.issues.map((i) => i.variable).sort()).toEqual(Object.keys(bad).sort())
    for (const [name, value] of Object.entries(bad)) {
      expect(error.message).toContain(`${name}: `)
      expect(error.message).toContain(JSON.stringify(value))
    }
  })
})
