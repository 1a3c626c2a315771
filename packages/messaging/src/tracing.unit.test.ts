import { describe, expect, it } from 'vitest'
import { rabbitDestination } from './tracing.js'

describe('rabbitDestination (messaging.destination.name for RabbitMQ)', () => {
  it.each([
    ['events', 'order.placed', undefined, 'events:order.placed'],
    ['events', 'order.placed', 'shop.invoice', 'events:order.placed:shop.invoice'],
    ['', 'shop.invoice', 'shop.invoice', 'shop.invoice'],
    ['', 'order.placed', undefined, 'order.placed'],
    ['events', undefined, 'shop.audit', 'events:shop.audit'],
    ['', '', undefined, 'amq.default'],
  ])(
    'when the exchange is %j, the routing key %j and the queue %j, then it is %j',
    (exchange, key, queue, expected) => {
      expect(rabbitDestination(exchange, key, queue)).toBe(expected)
    },
  )
})
