import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineEvent } from './define.js'
import { allEvents } from './index.js'
import { OrderCreatedV1, OrderCreatedV1toV2, OrderCreatedV2 } from './order.js'
import {
  nextAfter,
  producerOf,
  producers,
  readsOf,
  sagaFacts,
  sagaMap,
  SERVICES,
  terminalFacts,
  upcasterProblems,
  type Reaction,
} from './saga-map.js'
import { consumersOf } from './compat/gate.js'

describe('saga map', () => {
  it('when every event is listed, then each has exactly one producer', () => {
    const produced = SERVICES.flatMap((s) => producers[s].map((e) => e.type))
    expect(produced.sort()).toEqual(allEvents.map((e) => e.type).sort())
  })

  it('when a handler is named, then it is unique within its service and follows <reaction>-when-<fact>', () => {
    const handlers = sagaMap.filter((r) => r.recorder !== true)
    for (const service of SERVICES) {
      const names = handlers.filter((r) => r.service === service).map((r) => r.handler)
      expect(new Set(names).size).toBe(names.length)
    }
    for (const r of handlers) {
      expect(r.handler).toMatch(new RegExp(`-when-${r.reactsTo.routingKey.replace(/\./g, '-')}$`))
    }
  })

  it('when a fact is only recorded, then its recorder emits nothing and takes the fact once', () => {
    const recorded = sagaMap.filter((r) => r.recorder === true)
    expect(recorded.length).toBeGreaterThan(0)
    for (const r of recorded) expect(r.mayEmit).toEqual([])
    const keys = recorded.map((r) => `${r.service}/${r.handler}/${r.reactsTo.type}`)
    expect(new Set(keys).size).toBe(keys.length)
    // A recorder's name must not also be a handler's: they would share a queue.
    const handlerNames = sagaMap.filter((r) => r.recorder !== true).map((r) => `${r.service}/${r.handler}`)
    for (const r of recorded) expect(handlerNames).not.toContain(`${r.service}/${r.handler}`)
  })

  it('when a reaction emits, then it emits only what its own service produces', () => {
    for (const r of sagaMap) {
      for (const e of r.mayEmit) expect(producerOf(e.routingKey)).toBe(r.service)
    }
  })

  it('when every fact is published, then some queue takes its routing key (mandatory publish), and every version has a reader', () => {
    // Queues are bound by routing key, so every version of an event reaches the queues of its event;
    // a consumer that does not read a newer version yet holds it (@saga/messaging) until it does.
    const bound = new Set(sagaMap.map((r) => r.reactsTo.routingKey))
    for (const e of allEvents) expect(bound.has(e.routingKey), e.type).toBe(true)
    const read = new Set(sagaMap.flatMap((r) => readsOf(r).map((c) => c.type)))
    expect(allEvents.filter((e) => !read.has(e.type)).map((e) => e.type)).toEqual([])
  })

  it('when the map names upcasters, then each reads an older version of the same event', () => {
    expect(sagaMap.flatMap(upcasterProblems)).toEqual([])
  })

  it('when a terminal fact is seen, then nothing more follows it', () => {
    for (const fact of terminalFacts) expect(nextAfter(fact.routingKey)).toEqual([])
  })

  it('when an order is cancelled, then every service with a step undoes it through one undo-if-any reaction', () => {
    const undo = sagaMap.filter((r) => r.undoIfAny === true)
    expect(undo.map((r) => r.service).sort()).toEqual(['inventory', 'payment', 'shipment'])
    for (const r of undo) {
      expect(r.reactsTo.routingKey).toBe('order.cancelled')
      expect(r.mayEmit).toHaveLength(1)
    }
    // Their facts are not expected in a walk: a cancelled order may have nothing to undo.
    expect(nextAfter('order.cancelled')).toEqual([])
  })

  it('when an unknown routing key is asked for, then producerOf names it', () => {
    expect(() => producerOf('order.vanished')).toThrow(/order\.vanished/)
  })
})

/** A fixture map: payment moved to order.created.v2 and reads v1 through the upcaster; a recorder still on v1. */
const movedPayment: Reaction = {
  service: 'payment',
  handler: 'process-payment-when-order-created',
  reactsTo: OrderCreatedV2,
  mayEmit: [],
  alsoReads: [OrderCreatedV1toV2],
}
const v1Recorder: Reaction = {
  service: 'order',
  handler: 'record-timeline',
  reactsTo: OrderCreatedV1,
  mayEmit: [],
  recorder: true,
}

describe('reactions that read older versions', () => {
  it('when a reaction reads v2 and upcasts v1, then it reads both, v2 first', () => {
    expect(readsOf(movedPayment).map((c) => c.type)).toEqual(['order.created.v2', 'order.created.v1'])
    expect(readsOf(v1Recorder).map((c) => c.type)).toEqual(['order.created.v1'])
  })

  it('when the consumers of each version are listed, then the upcasting reaction is a consumer of both', () => {
    const map = [movedPayment, v1Recorder]
    expect(consumersOf('order.created.v1', map)).toEqual([
      'payment/process-payment-when-order-created',
      'order/record-timeline',
    ])
    expect(consumersOf('order.created.v2', map)).toEqual(['payment/process-payment-when-order-created'])
  })

  it('when an upcaster is from another event, from the same version, or given twice, then each problem is named', () => {
    const other = defineEvent('payment.processed.v1', z.object({ orderId: z.string() }))
    const wrong: Reaction = {
      ...movedPayment,
      alsoReads: [
        OrderCreatedV1toV2,
        OrderCreatedV1toV2,
        { from: other, upcast: () => ({}) },
        { from: OrderCreatedV2, upcast: (p) => p },
      ],
    }
    expect(upcasterProblems(wrong)).toEqual([
      'payment/process-payment-when-order-created has two upcasters from order.created.v1',
      'payment/process-payment-when-order-created upcasts payment.processed.v1, not a version of order.created',
      'payment/process-payment-when-order-created upcasts order.created.v2 to itself',
    ])
    expect(upcasterProblems(movedPayment)).toEqual([])
  })
})

describe('sagaFacts', () => {
  // The walk up to the stock step, shared by every story whose payment went through.
  const paid = ['order.created', 'payment.processed']

  it('when nothing failed, then the walk is the confirmed saga', () => {
    expect(sagaFacts()).toEqual([...paid, 'stock.reserved', 'shipment.created', 'order.confirmed'])
  })

  it('when the payment failed, then no compensation follows', () => {
    expect(sagaFacts('payment')).toEqual(['order.created', 'payment.failed', 'order.cancelled'])
  })

  it('when the stock step failed, then the payment is refunded', () => {
    expect(sagaFacts('stock')).toEqual([
      ...paid,
      'stock.reservation-failed',
      'order.cancelled',
      'payment.refunded',
    ])
  })

  it('when the shipment failed, then the payment is refunded and the stock released', () => {
    const reserved = [...paid, 'stock.reserved']
    expect(sagaFacts('shipment')).toEqual([
      ...reserved,
      'shipment.failed',
      'order.cancelled',
      'payment.refunded',
      'stock.released',
    ])
  })
})
