import { describe, expect, it } from 'vitest'
import { reasonText, stepOutcomes } from './ahead.js'
import type { PendingStep, WaitReason } from './api.js'

const step: PendingStep = {
  id: 'ahead:shipment:create-shipment-when-stock-reserved',
  service: 'shipment',
  handler: 'create-shipment-when-stock-reserved',
  reactsTo: 'stock.reserved',
  oneOf: ['shipment.created', 'shipment.failed'],
  branch: 'forward',
  kind: 'step',
  after: null,
  waiting: true,
  reasons: [],
}
const at = Date.parse('2026-12-04T13:53:16.327Z')

describe('a step ahead as the page says it', () => {
  it('when a step may succeed or fail, then both outcomes are named, success first', () => {
    expect(stepOutcomes(step)).toBe('ShipmentCreated or ShipmentFailed')
  })

  it('when its service is down, then since when and for how long, counted on from the join', () => {
    const reason = {
      kind: 'service' as const,
      service: 'shipment' as const,
      health: 'down' as const,
      reason: 'not live: unreachable (ECONNREFUSED)',
      since: '2026-12-04T13:52:16.000Z',
    }
    expect(reasonText(reason, step, 'utc', at + 2_000, at)).toBe(
      'shipment down since 13:52:16 (1 min 2 s): not live: unreachable (ECONNREFUSED)',
    )
  })

  it('when the figures of its queue are stale, then as of when they were read', () => {
    const queue = { kind: 'queue' as const, queue: 'q', ready: 3, consumers: 0 }
    expect(reasonText({ ...queue, stale: false, asOf: null }, step, 'utc', at, at)).toBe(
      'its queue: 3 ready, 0 consumers',
    )
    expect(reasonText({ ...queue, stale: true, asOf: '2026-12-04T13:50:00.000Z' }, step, 'utc', at, at)).toBe(
      'its queue: 3 ready, 0 consumers (as of 13:50:00)',
    )
  })

  it('when the fact is dead-lettered, parked or not consumed, then the fact is named with its time and reason', () => {
    const messageId = 'm'
    const since = '2026-12-04T13:53:06.327Z'
    const cases: [WaitReason, string][] = [
      [
        {
          kind: 'dead-letter',
          messageId,
          queue: 'q.dlq',
          reason: 'Error: no carrier',
          at: '2026-12-04T13:53:00.000Z',
        },
        'StockReserved dead-lettered 13:53:00.000: Error: no carrier',
      ],
      [
        {
          kind: 'unpublished',
          messageId,
          producer: 'inventory',
          state: 'parked',
          attempts: 10,
          lastError: 'NO_ROUTE',
        },
        "StockReserved parked in inventory's outbox after 10 attempts: NO_ROUTE",
      ],
      [
        { kind: 'not-consumed', messageId, since, inboxRead: true },
        'StockReserved not consumed yet, published 13:53:06.327 (10.0 s ago)',
      ],
      [
        { kind: 'not-consumed', messageId, since, inboxRead: false },
        'StockReserved published 13:53:06.327 (10.0 s ago); consumed? unknown, shipment could not be read',
      ],
    ]
    for (const [reason, text] of cases) expect(reasonText(reason, step, 'utc', at, at)).toBe(text)
  })

  it('when the deadline is ahead or past, then the time left counts down from the join to now', () => {
    const deadline = { kind: 'deadline' as const, deadlineAt: '2026-12-04T13:55:16.327Z', leftMs: 120_000 }
    expect(reasonText(deadline, step, 'utc', at + 30_000, at)).toBe('deadline in 1 min 30 s')
    expect(reasonText(deadline, step, 'utc', at + 125_000, at)).toBe('deadline passed 5.0 s ago')
  })
})
