import { describe, expect, it } from 'vitest'
import { helpOf, messagingSamples } from './messaging-series.js'

describe('messaging snapshot to Prometheus samples', () => {
  it('when the snapshot is nested, then numeric leaves flatten to snake_case series and others are dropped', () => {
    const samples = messagingSamples({
      relay: { publishedTotal: 3, running: true },
      brokerUp: 1,
      name: 'x',
      gap: NaN,
    })
    expect(samples).toEqual([
      { name: 'saga_messaging_relay_published_total', kind: 'counter', value: 3, labels: {} },
      { name: 'saga_messaging_broker_up', kind: 'gauge', value: 1, labels: {} },
    ])
  })

  it('when a key ends in Ms, then the series is in seconds and named so', () => {
    expect(messagingSamples({ relay: { oldestPendingAgeMs: 1500 } })).toEqual([
      { name: 'saga_messaging_relay_oldest_pending_age_seconds', kind: 'gauge', value: 1.5, labels: {} },
    ])
  })

  it('when counters are given per handler, then the handler is a label and the sums are left out', () => {
    const samples = messagingSamples({
      consumer: {
        handledTotal: 5,
        inFlight: 1,
        byHandler: {
          'reserve-stock': { handledTotal: 2, inFlight: 1 },
          releaseStock: { handledTotal: 3, inFlight: 0 },
        },
      },
    })
    expect(samples).toEqual([
      {
        name: 'saga_messaging_consumer_handled_total',
        kind: 'counter',
        value: 2,
        labels: { handler: 'reserve-stock' },
      },
      {
        name: 'saga_messaging_consumer_in_flight',
        kind: 'gauge',
        value: 1,
        labels: { handler: 'reserve-stock' },
      },
      {
        name: 'saga_messaging_consumer_handled_total',
        kind: 'counter',
        value: 3,
        labels: { handler: 'releaseStock' },
      },
      {
        name: 'saga_messaging_consumer_in_flight',
        kind: 'gauge',
        value: 0,
        labels: { handler: 'releaseStock' },
      },
    ])
  })

  it('when no handler is registered, then the consumer totals are exported without a handler label', () => {
    expect(messagingSamples({ consumer: { retriedTotal: 0, byHandler: {} } })).toEqual([
      { name: 'saga_messaging_consumer_retried_total', kind: 'counter', value: 0, labels: {} },
    ])
  })

  it('when a series is known or not, then its HELP is a sentence other than its name', () => {
    const known = helpOf('saga_messaging_relay_oldest_pending_age_seconds')
    expect(known).toMatch(/seconds/)
    expect(known).not.toMatch(/_ms|saga_messaging/)
    expect(helpOf('saga_messaging_relay_new_thing')).toMatch(/^Value relay_new_thing of /)
  })
})
