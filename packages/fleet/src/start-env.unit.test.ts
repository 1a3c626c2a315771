import { describe, expect, it } from 'vitest'
import { serviceDatabases } from './bootstrap.js'
import {
  fleetPorts,
  consoleEnv,
  consolePortOf,
  fleetBrokerNames,
  passwordsFromEnv,
  portOf,
  serviceEnv,
} from './start-env.js'

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

  it('when npm start runs with --prefix, then the exchange and queue prefix are the prefixed ones, unless AMQP_EXCHANGE names one', () => {
    expect(serviceEnv(order!, {}, 'amqp://a', false, 't1_')).toMatchObject({
      AMQP_EXCHANGE: 't1_saga.events',
      AMQP_QUEUE_PREFIX: 't1_order',
    })
    expect(serviceEnv(order!, { AMQP_EXCHANGE: 'mine' }, 'amqp://a', false, 't1_').AMQP_EXCHANGE).toBe('mine')
    expect(fleetBrokerNames('t1_', {}).queuePrefixes).toEqual({
      order: 't1_order',
      payment: 't1_payment',
      inventory: 't1_inventory',
      shipment: 't1_shipment',
    })
    const plain = serviceEnv(order!, {}, 'amqp://a')
    // Loopback unless the caller chose: a development fleet has no authentication.
    expect(plain.HOST).toBe('127.0.0.1')
    expect(serviceEnv(order!, { HOST: '0.0.0.0' }, 'amqp://a').HOST).toBe('0.0.0.0')
    expect(plain.AMQP_EXCHANGE).toBeUndefined()
    expect(plain.AMQP_QUEUE_PREFIX).toBeUndefined()
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

describe('the environment npm start gives the console', () => {
  it('when nothing is set, then it listens on 3005 on loopback and reads the services at their default ports', () => {
    const env = consoleEnv({ ADMIN_TOKEN: 'kept-from-the-caller-0123', DATABASE_URL: 'postgres://x' }, true)
    expect(env).toMatchObject({
      CONSOLE_PORT: '3005',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'pretty',
      ORDER_URL: 'http://127.0.0.1:3001',
      PAYMENT_URL: 'http://127.0.0.1:3002',
      INVENTORY_URL: 'http://127.0.0.1:3003',
      SHIPMENT_URL: 'http://127.0.0.1:3004',
      ADMIN_TOKEN: 'kept-from-the-caller-0123',
    })
    expect(env.DATABASE_URL).toBeUndefined()
  })

  it("when ports are chosen, then the console follows the services' and its own", () => {
    const env = consoleEnv({
      CONSOLE_PORT: '4005',
      PAYMENT_PORT: '4002',
      HOST: '0.0.0.0',
      LOG_FORMAT: 'json',
    })
    expect(env).toMatchObject({ CONSOLE_PORT: '4005', PAYMENT_URL: 'http://127.0.0.1:4002', HOST: '0.0.0.0' })
    expect(env.LOG_FORMAT).toBe('json')
  })

  it('when CONSOLE_PORT is not a port, then it throws naming the setting', () => {
    expect(() => consolePortOf({ CONSOLE_PORT: '70000' })).toThrow(
      'CONSOLE_PORT must be a TCP port (1-65535), got "70000"',
    )
  })
})

describe('the ports of npm start', () => {
  it('when none is set, then 3001-3005', () => {
    expect(fleetPorts({}).map((p) => `${p.name}:${p.port}`)).toEqual([
      'order:3001',
      'payment:3002',
      'inventory:3003',
      'shipment:3004',
      'console:3005',
    ])
  })

  it('when one is not a port, then the error names the variable and the value', () => {
    expect(() => fleetPorts({ ORDER_PORT: 'abc' })).toThrow(
      'ORDER_PORT must be a TCP port (1-65535), got "abc"',
    )
  })

  it('when two are given one port, then the error names both', () => {
    expect(() => fleetPorts({ ORDER_PORT: '3402', PAYMENT_PORT: '3402' })).toThrow(
      'order and payment are both given port 3402; each needs its own',
    )
    expect(() => fleetPorts({ CONSOLE_PORT: '3001' })).toThrow('order and console are both given port 3001')
  })
})
