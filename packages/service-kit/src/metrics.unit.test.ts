import { describe, expect, it } from 'vitest'
import { numericLeaves, seriesOf } from './metrics.js'

describe('messaging snapshot to Prometheus series', () => {
  it('when the snapshot is nested, then numeric leaves flatten to snake_case keys and others are dropped', () => {
    const leaves = numericLeaves({
      relay: { publishedTotal: 3, running: true },
      outboxPending: 2,
      name: 'x',
      gap: NaN,
    })
    expect(leaves).toEqual([
      ['relay_published_total', 3],
      ['outbox_pending', 2],
    ])
  })

  it('when a key ends in ms, then it becomes seconds; a total becomes a counter; the rest gauges', () => {
    expect(seriesOf('oldest_pending_age_ms', 1500)).toEqual({
      name: 'saga_messaging_oldest_pending_age_seconds',
      kind: 'gauge',
      value: 1.5,
    })
    expect(seriesOf('published_total', 4).kind).toBe('counter')
    expect(seriesOf('pending', 4).kind).toBe('gauge')
  })
})
