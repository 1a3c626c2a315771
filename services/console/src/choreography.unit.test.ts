import { randomUUID } from 'node:crypto'
import { sagaFacts, sagaMap } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { orderView as order } from '../test/support/order-view.js'
import { buildChoreography, classify } from './choreography.js'

describe('classify', () => {
  it('when a fact is on the confirmed walk of the saga map, then it is forward; every other fact is compensation', () => {
    const facts = new Set(
      sagaMap.flatMap((r) => [r.reactsTo.routingKey, ...r.mayEmit.map((e) => e.routingKey)]),
    )
    const forward = [...facts].filter((f) => classify(f).branch === 'forward')
    expect(forward.sort()).toEqual(sagaFacts().sort())
    expect(classify('payment.failed')).toEqual({ branch: 'compensation', kind: 'failure' })
    expect(classify('shipment.failed')).toEqual({ branch: 'compensation', kind: 'failure' })
    expect(classify('stock.released')).toEqual({ branch: 'compensation', kind: 'compensation' })
    expect(classify('order.cancelled')).toEqual({ branch: 'compensation', kind: 'compensation' })
  })
})

const empty = { records: {}, inbox: {}, deadLetters: {}, parked: {}, actions: {} }

describe('buildChoreography', () => {
  it('when the order is PENDING, then the time left is measured from now, negative and overdue past the deadline', () => {
    const pending = order({})
    const before = buildChoreography({ ...empty, order: pending }, new Date('2026-12-01T12:09:00.000Z'))
    expect(before.deadline).toEqual({ deadlineAt: pending.deadlineAt, timeLeftMs: 60_000, overdue: false })
    const after = buildChoreography({ ...empty, order: pending }, new Date('2026-12-01T12:10:05.000Z'))
    expect(after.deadline).toMatchObject({ timeLeftMs: -5_000, overdue: true })
  })

  it('when a forward fact occurred after the order was cancelled, then it is late; the compensations are not', () => {
    const cancelled = order({ status: 'CANCELLED', cancelledAt: '2026-12-01T12:10:00.000Z' })
    const event = (type: string, source: string, at: string) => {
      const id = randomUUID()
      return { id, messageId: id, type, source, occurredAt: at, recordedAt: at, note: null }
    }
    cancelled.events = [
      event('order.created.v1', 'order', '2026-12-01T12:00:00.000Z'),
      event('order.cancelled.v1', 'order', '2026-12-01T12:10:00.000Z'),
      event('payment.processed.v1', 'payment', '2026-12-01T12:10:01.000Z'),
      event('payment.refunded.v1', 'payment', '2026-12-01T12:10:02.000Z'),
    ]
    const { nodes } = buildChoreography({ ...empty, order: cancelled }, new Date())
    expect(nodes.map((n) => [n.routingKey, n.late])).toEqual([
      ['order.created', false],
      ['order.cancelled', false],
      ['payment.processed', true],
      ['payment.refunded', false],
    ])
  })

  it("when a fact is in the order's timeline, then the timeline recorder consumed another service's at its recording time and is no consumer of the order's own", () => {
    const cancelled = order({ status: 'CANCELLED', cancelledAt: '2026-12-01T12:00:02.000Z' })
    const refundedId = randomUUID()
    const ownId = randomUUID()
    const refunded = {
      id: refundedId,
      messageId: refundedId,
      type: 'payment.refunded.v1',
      source: 'payment',
      note: null,
    }
    const own = { id: ownId, messageId: ownId, type: 'order.cancelled.v1', source: 'order', note: null }
    cancelled.events = [
      { ...own, occurredAt: '2026-12-01T12:00:02.000Z', recordedAt: '2026-12-01T12:00:02.000Z' },
      { ...refunded, occurredAt: '2026-12-01T12:00:03.000Z', recordedAt: '2026-12-01T12:00:03.050Z' },
    ]
    const { nodes } = buildChoreography({ ...empty, order: cancelled }, new Date())
    const consumers = (id: string) =>
      nodes.find((n) => n.id === id)!.consumers.filter((c) => c.handler === 'record-timeline')
    expect(consumers(refunded.id)).toEqual([
      {
        service: 'order',
        handler: 'record-timeline',
        receivedAt: '2026-12-01T12:00:03.050Z',
        expected: true,
      },
    ])
    expect(consumers(own.id)).toEqual([])
  })

  it('when a dead letter has no message id (the broker dead-lettered a message no outbox published), then it is listed but is no fact of the graph', () => {
    const placed = order({})
    const messageId = randomUUID()
    const letter = {
      service: 'payment' as const,
      queue: 'payment.charge-payment.dlq',
      messageId: null,
      type: null,
      routingKey: null,
      correlationId: placed.id,
      causationId: null,
      aggregateId: placed.id,
      reason: 'delivery limit',
      handler: null,
      deadLetteredAt: null,
      payload: 'not json',
    }
    const withId = { ...letter, messageId, type: 'order.created.v1', routingKey: 'order.created' }
    const { nodes, deadLetters } = buildChoreography(
      { ...empty, order: placed, deadLetters: { payment: [letter, withId] } },
      new Date(),
    )
    expect(nodes.map((n) => n.id)).toEqual([messageId])
    expect(nodes[0]!.deadLetters).toEqual([
      {
        service: 'payment',
        queue: letter.queue,
        handler: null,
        reason: 'delivery limit',
        deadLetteredAt: null,
      },
    ])
    expect(deadLetters).toHaveLength(2)
  })
})

describe('buildChoreography: versions of a fact', () => {
  it('when the order was announced with order.created.v2, then it is the first forward step, from order, with the handlers of order.created as its consumers', () => {
    const pending = order({})
    const id = randomUUID()
    const at = '2026-12-01T12:00:00.000Z'
    pending.events = [
      {
        id,
        messageId: id,
        type: 'order.created.v2',
        source: 'order',
        occurredAt: at,
        recordedAt: at,
        note: null,
      },
    ]
    const [node, ...rest] = buildChoreography({ ...empty, order: pending }, new Date(at)).nodes
    expect(rest).toEqual([])
    expect(node).toMatchObject({
      type: 'order.created.v2',
      routingKey: 'order.created',
      producer: 'order',
      branch: 'forward',
      kind: 'step',
    })
    // Queues are bound by routing key: payment's handler gets v2 too (and holds it until it reads v2).
    expect(node?.consumers.map((c) => `${c.service}/${c.handler}`)).toEqual([
      'payment/process-payment-when-order-created',
    ])
  })
})
