import type { MessagingStats } from '@saga/messaging/parts'
import { createSignals, messagingMetrics } from '@saga/messaging/parts'
import { testStats } from '@saga/messaging/testing'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { registerDescriptors } from './metric-descriptors.js'

const stats = (): MessagingStats =>
  testStats({
    relay: { pending: 3, oldestPendingAgeMs: 1500, publishedTotal: 9 },
    consumer: { handledTotal: 5, byHandler: { 'reserve-stock': { handledTotal: 5 } } },
  })
const health = () => ({ ok: true, areas: [] })

describe('metric descriptors on prom-client', () => {
  it('when messages are published and handled, then lag, confirm latency and handler duration are observed in seconds', async () => {
    const registry = new Registry()
    const signals = createSignals()
    const stop = registerDescriptors(
      registry,
      messagingMetrics('saga_messaging', { stats, health, signals, recorders: false }),
    )
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

  it('when scraped, then counters and gauges carry the values the descriptors read, with their own names and HELP', async () => {
    const registry = new Registry()
    registerDescriptors(
      registry,
      messagingMetrics('saga_messaging', { stats, health, signals: createSignals(), recorders: false }),
    )
    const text = await registry.metrics()
    expect(text).toContain('saga_messaging_relay_published_total 9')
    expect(text).toContain('saga_messaging_relay_oldest_pending_age_seconds 1.5')
    expect(text).toContain('saga_messaging_consumer_handled_total{handler="reserve-stock"} 5')
    expect(text).toContain('# TYPE saga_messaging_relay_published_total counter')
    expect(text).toMatch(/# HELP saga_messaging_relay_pending Outbox rows waiting to be published/)
  })
})
