import { allEvents } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { amqpUrlFor, brokerPermissions, brokerUsers, PUBLISHED_PREFIX, vhostOf } from './broker-users.js'
import { amqpPasswordsFromEnv } from './start-env.js'

describe('broker users', () => {
  it('when permissions are built, then they match own queues and the exchange only', () => {
    const p = brokerPermissions('order')
    const configure = new RegExp(p.configure)
    expect(configure.test('order.confirm-order-when-shipment-created.dlq')).toBe(true)
    expect(configure.test('saga.events')).toBe(true)
    expect(configure.test('payment.process-payment-when-order-created')).toBe(false)
    expect(configure.test('orderx.q')).toBe(false)
    expect(configure.test('amq.default')).toBe(false)
    expect(new RegExp(p.write).test('amq.default')).toBe(true)
    expect(new RegExp(p.read).test('payment.process-payment-when-order-created')).toBe(false)
  })

  it('when every fact of the contracts is published, then exactly one service may publish its routing key', () => {
    const users = brokerUsers()
    for (const event of allEvents) {
      const publishers = users.filter((u) => new RegExp(u.topic.write).test(event.routingKey))
      expect(publishers, event.routingKey).toHaveLength(1)
    }
    expect(Object.keys(PUBLISHED_PREFIX)).toEqual(users.map((u) => u.service))
  })

  it('when a URL is given a user, then host and vhost stay and credentials are replaced and encoded', () => {
    const [order] = brokerUsers({ passwords: amqpPasswordsFromEnv({ ORDER_AMQP_PASSWORD: 'p@ss/word' }) })
    expect(amqpUrlFor(order!, 'amqp://guest:guest@broker:5673/saga')).toBe(
      'amqp://order-service:p%40ss%2Fword@broker:5673/saga',
    )
    expect(vhostOf('amqp://guest:guest@broker:5673/saga')).toBe('saga')
    expect(vhostOf('amqp://guest:guest@broker:5673')).toBe('/')
    expect(vhostOf('amqp://broker/%2F')).toBe('/')
  })
})
