import { randomUUID } from 'node:crypto'
import type { ServiceName } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { orderView as order } from '../test/support/order-view.js'
import { buildChoreography, type ChoreographyInput } from './choreography.js'
import type { ServiceSnapshot } from './fleet.js'
import { roadAhead } from './road-ahead.js'
import type { OrderView, OutboxRecord } from './shapes.js'

const T0 = '2026-12-01T12:00:00.000Z'
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1_000).toISOString()

/** A published outbox row of `type` for the order, committed `seconds` after T0. */
function row(orderId: string, type: string, seconds: number, causationId: string | null): OutboxRecord {
  return {
    id: randomUUID(),
    type,
    routingKey: type.replace(/\.v\d+$/, ''),
    aggregateId: orderId,
    correlationId: orderId,
    causationId,
    traceId: null,
    state: 'published',
    attempts: 1,
    lastError: null,
    occurredAt: at(seconds),
    publishedAt: at(seconds),
    failedAt: null,
    payload: { orderId },
    headers: {},
  }
}

/** The order's facts so far as the producers' outboxes hold them: created, processed, reserved. */
function waitingForShipment(placed: OrderView) {
  const created = row(placed.id, 'order.created.v1', 0, null)
  const processed = row(placed.id, 'payment.processed.v1', 1, created.id)
  const reserved = row(placed.id, 'stock.reserved.v1', 2, processed.id)
  return { created, processed, reserved }
}

function input(placed: OrderView, records: ChoreographyInput['records']): ChoreographyInput {
  return { order: placed, records, inbox: {}, deadLetters: {}, parked: {}, actions: {} }
}

/** A service as the fleet poll saw it: up, or down since `since`; its queues as last read. */
function service(name: ServiceName, health: 'up' | 'down', since: string, queues = {}): ServiceSnapshot {
  const probe = { ok: health === 'up', status: 200, reason: null, ms: 1 }
  return {
    service: name,
    url: `http://127.0.0.1/${name}`,
    health,
    reason: health === 'up' ? null : 'not live: unreachable (ECONNREFUSED)',
    healthSince: since,
    live: probe,
    ready: probe,
    messaging: null,
    messagingError: null,
    queues: { state: 'unknown', readAt: null, items: [], ...queues },
  }
}

describe('roadAhead: a running order', () => {
  it('when a running order waits for a stopped shipment, then the rest of the walk is pending and the step waited for says why: down since, its queue, the fact not consumed, the deadline left', () => {
    const placed = order()
    const facts = waitingForShipment(placed)
    const choreography = buildChoreography(
      input(placed, {
        order: [facts.created],
        payment: [facts.processed],
        inventory: [facts.reserved],
      }),
      new Date(at(60)),
    )
    const queue = {
      handler: 'create-shipment-when-stock-reserved',
      queue: 'saga.shipment.create-shipment-when-stock-reserved',
      deadLetterQueue: 'saga.shipment.create-shipment-when-stock-reserved.dlq',
      ready: 1,
      consumers: 1,
      deadLettered: 0,
    }
    const fleet = {
      services: [
        service('payment', 'up', T0),
        service('shipment', 'down', at(-30), { state: 'stale', readAt: at(-32), items: [queue] }),
      ],
    }

    const ahead = roadAhead({ order: placed, choreography, unread: ['shipment'], fleet })

    expect(ahead.map((s) => [s.id, s.waiting, s.after])).toEqual([
      ['ahead:shipment:create-shipment-when-stock-reserved', true, facts.reserved.id],
      [
        'ahead:order:confirm-order-when-shipment-created',
        false,
        'ahead:shipment:create-shipment-when-stock-reserved',
      ],
    ])
    expect(ahead[0]).toMatchObject({
      oneOf: ['shipment.created', 'shipment.failed'],
      branch: 'forward',
      kind: 'step',
    })
    expect(ahead[0]!.reasons).toEqual([
      {
        kind: 'service',
        service: 'shipment',
        health: 'down',
        reason: 'not live: unreachable (ECONNREFUSED)',
        since: at(-30),
      },
      { kind: 'queue', queue: queue.queue, ready: 1, consumers: 1, stale: true, asOf: at(-32) },
      // The join could not read shipment's inbox: whether it consumed the fact is not known.
      { kind: 'not-consumed', messageId: facts.reserved.id, since: at(2), inboxRead: false },
      { kind: 'deadline', deadlineAt: at(600), leftMs: 540_000 },
    ])
    expect(ahead[1]!.reasons).toEqual([])
  })
})

describe('roadAhead: an ended order', () => {
  it('when an order ended CANCELLED by its deadline while shipment was away, then no step of the branch not taken is drawn, only the undos owed', () => {
    const placed = order({ status: 'CANCELLED', cancelledAt: at(600), deadlineAt: at(600) })
    const facts = waitingForShipment(placed)
    const cancelled = row(placed.id, 'order.cancelled.v1', 600, null)
    const refunded = row(placed.id, 'payment.refunded.v1', 601, cancelled.id)
    const records = {
      order: [facts.created, cancelled],
      payment: [facts.processed, refunded],
      inventory: [facts.reserved],
    }
    const choreography = buildChoreography(input(placed, records), new Date(at(602)))
    const fleet = { services: [service('shipment', 'down', at(-30)), service('inventory', 'up', T0)] }

    const ahead = roadAhead({ order: placed, choreography, unread: [], fleet })

    // Neither shipment's step nor the confirmation: the order will not take them.
    expect(ahead.map((s) => [s.id, s.waiting, s.after, s.branch])).toEqual([
      ['ahead:inventory:release-stock-when-order-cancelled', true, cancelled.id, 'compensation'],
    ])
    // An ended order has no deadline left to wait out.
    expect(ahead[0]!.reasons).toEqual([
      { kind: 'not-consumed', messageId: cancelled.id, since: at(600), inboxRead: true },
    ])
  })

  it('when an order is CONFIRMED, then nothing is ahead', () => {
    const placed = order({ status: 'CONFIRMED', confirmedAt: at(4) })
    const facts = waitingForShipment(placed)
    const created = row(placed.id, 'shipment.created.v1', 3, facts.reserved.id)
    const confirmed = row(placed.id, 'order.confirmed.v1', 4, created.id)
    const records = {
      order: [facts.created, confirmed],
      payment: [facts.processed],
      inventory: [facts.reserved],
      shipment: [created],
    }
    const choreography = buildChoreography(input(placed, records), new Date(at(5)))
    expect(roadAhead({ order: placed, choreography, unread: [], fleet: null })).toEqual([])
  })
})

describe('roadAhead: where the fact waited on is', () => {
  it("when the step's handler dead-lettered the fact, then the dead letter and its reason are why", () => {
    const placed = order()
    const facts = waitingForShipment(placed)
    const queue = 'saga.shipment.create-shipment-when-stock-reserved.dlq'
    const letter = {
      service: 'shipment' as const,
      queue,
      messageId: facts.reserved.id,
      type: 'stock.reserved.v1',
      routingKey: 'stock.reserved',
      correlationId: placed.id,
      causationId: facts.processed.id,
      aggregateId: placed.id,
      reason: 'Error: carrier account missing',
      handler: 'create-shipment-when-stock-reserved',
      deadLetteredAt: at(5),
      payload: { orderId: placed.id },
    }
    const records = { order: [facts.created], payment: [facts.processed], inventory: [facts.reserved] }
    const choreography = buildChoreography(
      { ...input(placed, records), deadLetters: { shipment: [letter] } },
      new Date(at(10)),
    )

    const [step] = roadAhead({
      order: placed,
      choreography,
      unread: [],
      fleet: { services: [service('shipment', 'up', T0)] },
    })

    expect(step!.reasons).toEqual([
      {
        kind: 'dead-letter',
        messageId: facts.reserved.id,
        queue,
        reason: 'Error: carrier account missing',
        at: at(5),
      },
      { kind: 'not-consumed', messageId: facts.reserved.id, since: at(2), inboxRead: true },
      { kind: 'deadline', deadlineAt: at(600), leftMs: 590_000 },
    ])
  })

  it("when the fact waited on is parked in its producer's outbox, then the parked row is why, with its last error", () => {
    const placed = order()
    const facts = waitingForShipment(placed)
    const parked = {
      ...facts.reserved,
      state: 'parked' as const,
      attempts: 10,
      lastError: 'returned unroutable',
      publishedAt: null,
      failedAt: at(30),
    }
    const records = { order: [facts.created], payment: [facts.processed], inventory: [parked] }
    const choreography = buildChoreography(input(placed, records), new Date(at(660)))

    const [step] = roadAhead({ order: placed, choreography, unread: [], fleet: null })

    expect(step!.reasons).toEqual([
      {
        kind: 'unpublished',
        messageId: parked.id,
        producer: 'inventory',
        state: 'parked',
        attempts: 10,
        lastError: 'returned unroutable',
      },
      { kind: 'deadline', deadlineAt: at(600), leftMs: -60_000 },
    ])
  })
})
