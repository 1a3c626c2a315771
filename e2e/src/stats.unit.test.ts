import { describe, expect, it } from 'vitest'
import { expectedFacts } from './chain.js'
import { seriesValue } from './metrics.js'
import { percentile, summarize } from './stats.js'

describe('summarize', () => {
  it('when given samples, then p50, p99 and max follow the nearest-rank method', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i) // 100..1, unsorted
    expect(summarize(samples)).toEqual({ count: 100, p50: 50, p99: 99, max: 100 })
  })

  it('when there is one sample, then every percentile is that sample', () => {
    expect(percentile([7], 50)).toBe(7)
    expect(percentile([7], 99)).toBe(7)
  })
})

describe('seriesValue', () => {
  it('when a metric has several label sets, then their samples are summed', () => {
    const text = [
      '# HELP saga_messaging_consumer_duplicates_total @saga/messaging consumer_duplicates_total',
      'saga_messaging_consumer_duplicates_total{saga_service="order"} 12',
      'saga_messaging_consumer_duplicates_total{saga_service="payment"} 6',
      'saga_messaging_consumer_duplicates_total_other 99',
    ].join('\n')
    expect(seriesValue(text, 'saga_messaging_consumer_duplicates_total')).toBe(18)
  })

  it('when the metric is absent, then it is 0', () => {
    expect(seriesValue('', 'nope_total')).toBe(0)
  })
})

describe('expectedFacts', () => {
  it('when an order was cancelled at the shipment step, then its saga needs the refund and the release', () => {
    expect(expectedFacts('CANCELLED', 'shipment')).toEqual(
      expect.arrayContaining(['shipment.failed', 'order.cancelled', 'payment.refunded', 'stock.released']),
    )
  })

  it('when an order was declined, then no compensation is expected', () => {
    expect(expectedFacts('CANCELLED', 'payment')).toEqual([
      'order.created',
      'payment.failed',
      'order.cancelled',
    ])
  })

  it('when an order was cancelled by its deadline or its customer, then only the cancel is expected (the books judge the rest)', () => {
    for (const [reason, step] of [
      ['deadline_exceeded', 'shipment'],
      ['customer_requested', null],
    ] as const) {
      expect(expectedFacts('CANCELLED', step, reason)).toEqual(['order.created', 'order.cancelled'])
    }
  })
})
