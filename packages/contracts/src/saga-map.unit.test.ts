import { describe, expect, it } from 'vitest'
import { allEvents } from './index.js'
import { nextAfter, producerOf, producers, sagaFacts, sagaMap, SERVICES, terminalFacts } from './saga-map.js'

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

  it('when every fact is published, then some queue takes it (mandatory publish)', () => {
    const consumed = new Set(sagaMap.map((r) => r.reactsTo.type))
    for (const e of allEvents) expect(consumed.has(e.type)).toBe(true)
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
