import { createSignals } from '@saga/messaging'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { registerMessagingHistograms } from './messaging-histograms.js'

describe('messaging histograms', () => {
  it('when messages are published and handled, then lag, confirm latency and handler duration are observed in seconds', async () => {
    const registry = new Registry()
    const signals = createSignals()
    const stop = registerMessagingHistograms(registry, signals)
    signals.emit('published', { id: 'a', type: 't', routingKey: 'k', lagMs: 40, confirmMs: 3 })
    signals.emit('published', { id: 'b', type: 't', routingKey: 'k', lagMs: 2_000, confirmMs: 3 })
    signals.emit('handled', { id: 'a', type: 't', handler: 'h-one', correlationId: 'o', durationMs: 7 })
    signals.emit('handled', { id: 'a', type: 't', handler: 'h-two', correlationId: 'o' })
    const text = await registry.metrics()
    expect(text).toContain('saga_messaging_outbox_lag_seconds_bucket{le="0.05"} 1')
    expect(text).toContain('saga_messaging_outbox_lag_seconds_bucket{le="2.5"} 2')
    expect(text).toContain('saga_messaging_outbox_lag_seconds_sum 2.04')
    expect(text).toContain('saga_messaging_confirm_latency_seconds_count 2')
    expect(text).toContain('saga_messaging_handler_duration_seconds_bucket{le="0.01",handler="h-one"} 1')
    // A handled signal without a duration (a batch recorder's) is not observed.
    expect(text).not.toContain('handler="h-two"')
    stop()
    signals.emit('published', { id: 'c', type: 't', routingKey: 'k', lagMs: 1, confirmMs: 1 })
    expect(await registry.metrics()).toContain('saga_messaging_confirm_latency_seconds_count 2')
  })
})
