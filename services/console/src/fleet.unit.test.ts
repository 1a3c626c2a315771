import { describe, expect, it } from 'vitest'
import { carryQueues, type QueueFigures } from './fleet.js'
import type { MessagingSummary } from './shapes.js'

const queue = (ready: number): QueueFigures => ({
  handler: 'process-payment-when-order-created',
  queue: 'payment.process-payment-when-order-created',
  deadLetterQueue: 'payment.process-payment-when-order-created.dlq',
  ready,
  consumers: 1,
  deadLettered: 0,
})

const summary = (ready: number): MessagingSummary => ({
  service: 'payment',
  at: '2026-12-01T12:00:00.000Z',
  broker: 'connected',
  outbox: { pending: 0, parked: 0, oldestPendingAt: null, oldestPendingAgeMs: null },
  queues: [queue(ready)],
})

describe('carryQueues', () => {
  it('when the summary was read, then its queues are live as of this poll', () => {
    const previous = { state: 'stale' as const, readAt: '2026-12-01T11:00:00.000Z', items: [queue(9)] }
    expect(carryQueues(summary(3), '2026-12-01T12:00:02.000Z', previous)).toEqual({
      state: 'live',
      readAt: '2026-12-01T12:00:02.000Z',
      items: [queue(3)],
    })
  })

  it('when the summary cannot be read, then the last figures read stay, stale with the time they were read', () => {
    const live = carryQueues(summary(3), '2026-12-01T12:00:02.000Z', undefined)
    const stale = carryQueues(null, '2026-12-01T12:00:04.000Z', live)
    const later = carryQueues(null, '2026-12-01T12:00:06.000Z', stale)
    expect(later).toEqual({ state: 'stale', readAt: '2026-12-01T12:00:02.000Z', items: [queue(3)] })
  })

  it('when the summary was never read, then the queues are unknown', () => {
    const first = carryQueues(null, '2026-12-01T12:00:02.000Z', undefined)
    expect(first).toEqual({ state: 'unknown', readAt: null, items: [] })
    expect(carryQueues(null, '2026-12-01T12:00:04.000Z', first)).toEqual(first)
  })
})
