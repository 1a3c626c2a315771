import { describe, expect, it } from 'vitest'
import { TopologyError, topologyDefinitions } from './topology.js'

const handler = (name: string, routingKey: string) => ({ name, message: { routingKey } })

describe('topologyDefinitions', () => {
  it('when a service has two handlers, then it defines the exchange, a quorum queue and DLQ each, and the bindings', () => {
    const definitions = topologyDefinitions({
      exchange: 'saga.events',
      queuePrefix: 'payment',
      handlers: [
        handler('process-payment-when-order-created', 'order.created'),
        handler('refund-payment-when-shipment-failed', 'shipment.failed'),
      ],
    })

    expect(definitions.exchanges).toEqual([
      {
        name: 'saga.events',
        vhost: '/',
        type: 'topic',
        durable: true,
        auto_delete: false,
        internal: false,
        arguments: {},
      },
    ])
    expect(definitions.queues.map((queue) => [queue.name, queue.arguments])).toEqual([
      ['payment.process-payment-when-order-created.dlq', { 'x-queue-type': 'quorum' }],
      [
        'payment.process-payment-when-order-created',
        {
          'x-queue-type': 'quorum',
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'payment.process-payment-when-order-created.dlq',
          'x-delivery-limit': 20,
        },
      ],
      ['payment.refund-payment-when-shipment-failed.dlq', { 'x-queue-type': 'quorum' }],
      [
        'payment.refund-payment-when-shipment-failed',
        {
          'x-queue-type': 'quorum',
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'payment.refund-payment-when-shipment-failed.dlq',
          'x-delivery-limit': 20,
        },
      ],
    ])
    expect(definitions.queues.every((queue) => queue.durable && !queue.auto_delete)).toBe(true)
    expect(
      definitions.bindings.map((binding) => [binding.source, binding.destination, binding.routing_key]),
    ).toEqual([
      ['saga.events', 'payment.process-payment-when-order-created', 'order.created'],
      ['saga.events', 'payment.refund-payment-when-shipment-failed', 'shipment.failed'],
    ])
  })

  it('when a vhost and a delivery limit are given, then the definitions carry them', () => {
    const definitions = topologyDefinitions({
      exchange: 'saga.events',
      queuePrefix: 'order',
      vhost: 'saga',
      deliveryLimit: 5,
      handlers: [handler('confirm-order-when-shipment-created', 'shipment.created')],
    })
    expect(definitions.queues[1]?.arguments['x-delivery-limit']).toBe(5)
    expect(
      new Set([...definitions.exchanges, ...definitions.queues, ...definitions.bindings].map((d) => d.vhost)),
    ).toEqual(new Set(['saga']))
  })

  it('when two handlers share a name or a name is not kebab-case, then it throws a TopologyError', () => {
    const twice = { exchange: 'x', queuePrefix: 'p', handlers: [handler('same', 'a'), handler('same', 'b')] }
    expect(() => topologyDefinitions(twice)).toThrow(new TopologyError(`handler name 'same' is used twice`))
    const camel = { exchange: 'x', queuePrefix: 'p', handlers: [handler('reserveStock', 'a')] }
    expect(() => topologyDefinitions(camel)).toThrow(TopologyError)
  })

  it('when a service has a batch recorder, then it gets a queue and DLQ like a handler, bound to every fact it records', () => {
    const definitions = topologyDefinitions({
      exchange: 'saga.events',
      queuePrefix: 'order',
      handlers: [handler('confirm-order-when-shipment-created', 'shipment.created')],
      recorders: [
        {
          name: 'record-timeline',
          messages: [{ routingKey: 'payment.processed' }, { routingKey: 'stock.reserved' }],
        },
      ],
    })
    expect(definitions.queues.map((queue) => queue.name)).toEqual([
      'order.confirm-order-when-shipment-created.dlq',
      'order.confirm-order-when-shipment-created',
      'order.record-timeline.dlq',
      'order.record-timeline',
    ])
    expect(definitions.queues[3]?.arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-dead-letter-routing-key': 'order.record-timeline.dlq',
    })
    expect(definitions.bindings.map((b) => [b.destination, b.routing_key])).toEqual([
      ['order.confirm-order-when-shipment-created', 'shipment.created'],
      ['order.record-timeline', 'payment.processed'],
      ['order.record-timeline', 'stock.reserved'],
    ])
  })

  it("when a recorder has a handler's name, then it throws a TopologyError (they would share a queue)", () => {
    expect(() =>
      topologyDefinitions({
        exchange: 'saga.events',
        queuePrefix: 'order',
        handlers: [handler('record-timeline', 'payment.processed')],
        recorders: [{ name: 'record-timeline', messages: [{ routingKey: 'stock.reserved' }] }],
      }),
    ).toThrow(TopologyError)
  })
})
