import { EnvError } from '@saga/service-kit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: 'postgresql://order@127.0.0.1:5432/order',
  ...extra,
})

describe('ORDER_CREATED_VERSION', () => {
  it('when it is not set, then new orders are announced with order.created.v1', () => {
    expect(loadConfig(env()).ORDER_CREATED_VERSION).toBe(1)
  })

  it('when it is 1 or 2, then that version is used', () => {
    expect(loadConfig(env({ ORDER_CREATED_VERSION: '1' })).ORDER_CREATED_VERSION).toBe(1)
    expect(loadConfig(env({ ORDER_CREATED_VERSION: '2' })).ORDER_CREATED_VERSION).toBe(2)
  })

  it.each(['3', 'v2', '2.0', '', ' 2'])(
    'when it is %j, then the service refuses to start naming the variable and what it takes',
    (value) => {
      let thrown: unknown
      try {
        loadConfig(env({ ORDER_CREATED_VERSION: value }))
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(EnvError)
      expect((thrown as EnvError).issues.map((i) => i.variable)).toEqual(['ORDER_CREATED_VERSION'])
      expect((thrown as EnvError).message).toContain(
        `ORDER_CREATED_VERSION: must be 1 or 2: the version of order.created new orders are announced with (got ${JSON.stringify(value)})`,
      )
    },
  )
})
