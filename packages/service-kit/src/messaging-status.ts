import type { MessagingTimingSignals } from './messaging-histograms.js'

/**
 * What service-kit reads from a `@saga/messaging` instance, described structurally so the kit does
 * not depend on the messaging implementation (see packages/messaging/README.md,
 * "API": `health()`, `metrics()`).
 */
export interface MessagingStatusSource {
  /** Messaging's own readiness report (see `MessagingHealthLike`). */
  health(): MessagingHealthLike | Promise<MessagingHealthLike>
  /** A snapshot of counters and gauges; numeric leaves are exported to Prometheus (see metrics.ts). */
  metrics(): unknown
  /** When present, its published and handled signals feed the messaging histograms (messaging-histograms.ts). */
  signals?: MessagingTimingSignals | undefined
}

/**
 * The part of `messaging.health()` service-kit reads. `problems` are prefixed by area (`broker:`,
 * `outbox:`, `consumer:`); fields messaging adds later pass through the broker check.
 */
export interface MessagingHealthLike {
  /** Every AMQP connection the service needs is open. */
  broker: boolean
  /** Why messaging is not ready, e.g. `['broker: relay connection down']`; empty when ready. */
  problems: readonly string[]
  /** Age of the oldest pending outbox row, ms. */
  oldestPendingAgeMs?: number | null | undefined
}
