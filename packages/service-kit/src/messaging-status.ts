/**
 * What service-kit reads from a `@saga/messaging` instance, described structurally so the kit does
 * not depend on the messaging implementation (see packages/messaging/README.md,
 * "API": `health()`, `metrics()`).
 */
export interface MessagingStatusSource {
  /** `broker`: the AMQP connection is up; `oldestPendingAgeMs`: age of the oldest pending outbox row (ms). */
  health(): MessagingHealthLike | Promise<MessagingHealthLike>
  /** A snapshot of counters and gauges; numeric leaves are exported to Prometheus (see metrics.ts). */
  metrics(): unknown
}

export interface MessagingHealthLike {
  broker: boolean
  oldestPendingAgeMs?: number | null | undefined
}
