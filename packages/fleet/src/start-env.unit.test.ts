import { describe, expect, it } from 'vitest'
import { serviceDatabases } from './bootstrap.js'
import { passwordsFromEnv, portOf, serviceEnv } from './start-env.js'

describe('the environment npm start gives each service', () => {
  const [order, , inventory] = serviceDatabases({
    postgresUrl: 'postgresql://postgres@db.local:6543/postgres',
  })

  it('when nothing is overridden, then each gets its default port and its own database URL', () => {
    const env = serviceEnv(order!, { PORT: '9999', LOG_LEVEL: 'debug' }, 'amqp://x@y:5672')
    expect(env).toMatchObject({
      PORT: '3001',
      DATABASE_URL: 'postgresql://order_service:order_service@db.local:6543/order_service',
      AMQP_URL: 'amqp://x@y:5672',
      LOG_LEVEL: 'debug',
    })
    expect(env.SEED_CATALOGUE).toBeUndefined()
  })

  it('when the service is inventory, then the catalogue is seeded unless the caller says otherwise', () => {
    expect(serviceEnv(inventory!, {}, 'amqp://a').SEED_CATALOGUE).toBe('true')
    expect(serviceEnv(inventory!, { SEED_CATALOGUE: 'false' }, 'amqp://a').SEED_CATALOGUE).toBe('false')
  })

  it('when npm start writes to a terminal, then the services log pretty unless LOG_FORMAT says otherwise', () => {
    expect(serviceEnv(order!, {}, 'amqp://a', true).LOG_FORMAT).toBe('pretty')
    expect(serviceEnv(order!, { LOG_FORMAT: 'json' }, 'amqp://a', true).LOG_FORMAT).toBe('json')
    expect(serviceEnv(order!, {}, 'amqp://a', false).LOG_FORMAT).toBeUndefined()
    expect(serviceEnv(order!, {}, 'amqp://a').LOG_FORMAT).toBeUndefined()
  })

  it('when ports and passwords are overridden, then they are used, and a bad port is named', () => {
    expect(portOf('payment', { PAYMENT_PORT: '4002' })).toBe(4002)
    expect(passwordsFromEnv({ ORDER_DB_PASSWORD: 's3cret' })).toEqual({ order: 's3cret' })
    expect(() => portOf('order', { ORDER_PORT: 'http' })).toThrow(/ORDER_PORT/)
  })

  it('when <SERVICE>_INSTANCES is set, then only that service gets INSTANCES, and a global INSTANCES passes through', () => {
    expect(serviceEnv(order!, { ORDER_INSTANCES: '2' }, 'amqp://a').INSTANCES).toBe('2')
    expect(serviceEnv(inventory!, { ORDER_INSTANCES: '2' }, 'amqp://a').INSTANCES).toBeUndefined()
    expect(serviceEnv(inventory!, { INSTANCES: '3', INVENTORY_INSTANCES: '' }, 'amqp://a').INSTANCES).toBe(
      '3',
    )
  })
})
