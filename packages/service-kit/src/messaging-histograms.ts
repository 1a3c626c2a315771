import { Histogram, type Registry } from 'prom-client'

/** The signals of `@saga/messaging` the histograms observe (its `SignalMap`, the fields read here). */
export interface MessagingTimingSignals {
  on(name: 'published', listener: (p: { lagMs?: number; confirmMs?: number }) => void): () => void
  on(name: 'handled', listener: (p: { handler: string; durationMs?: number }) => void): () => void
}

// Seconds. Handler transactions take milliseconds; outbox lag and confirms stretch to seconds
// during a broker outage, so the buckets reach 60 s (an alert on the p99 needs a bucket above it).
const FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const SLOW = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/**
 * Registers the messaging-path histograms on `registry` and feeds them from `signals`:
 * - `saga_messaging_handler_duration_seconds{handler}`: one committed inbox transaction, BEGIN to COMMIT;
 * - `saga_messaging_outbox_lag_seconds`: a row's occurred_at to its broker confirm (published - occurred);
 * - `saga_messaging_confirm_latency_seconds`: a batch's first publish to its last confirm, per message.
 * Returns a function that stops observing (the app's onClose calls it).
 */
export function registerMessagingHistograms(registry: Registry, signals: MessagingTimingSignals): () => void {
  const handler = new Histogram({
    name: 'saga_messaging_handler_duration_seconds',
    help: 'Duration of committed inbox transactions (the handler and its inbox row), BEGIN to COMMIT, in seconds, by handler.',
    labelNames: ['handler'],
    buckets: FAST,
    registers: [registry],
  })
  const lag = new Histogram({
    name: 'saga_messaging_outbox_lag_seconds',
    help: 'Outbox lag of published messages: from the row occurred_at (database clock) to the broker confirm, in seconds.',
    buckets: SLOW,
    registers: [registry],
  })
  const confirm = new Histogram({
    name: 'saga_messaging_confirm_latency_seconds',
    help: 'Publisher confirm latency of published messages: their batch first publish to its last confirm, in seconds.',
    buckets: SLOW,
    registers: [registry],
  })
  const offPublished = signals.on('published', (p) => {
    if (p.lagMs !== undefined) lag.observe(p.lagMs / 1000)
    if (p.confirmMs !== undefined) confirm.observe(p.confirmMs / 1000)
  })
  const offHandled = signals.on('handled', (p) => {
    if (p.durationMs !== undefined) handler.observe({ handler: p.handler }, p.durationMs / 1000)
  })
  return () => {
    offPublished()
    offHandled()
  }
}
