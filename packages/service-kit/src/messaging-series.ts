/** One Prometheus sample of the messaging snapshot, in base units (seconds). */
export interface MessagingSample {
  /** e.g. `saga_messaging_consumer_handled_total`. */
  name: string
  kind: 'counter' | 'gauge'
  value: number
  /** `{ handler }` for the per-handler consumer counters, else `{}`. */
  labels: Record<string, string>
}

/**
 * HELP text of each series `@saga/messaging`'s `metrics()` snapshot yields (see
 * packages/messaging/README.md, "Metrics"). A leaf missing here still gets exported, with a generic text.
 */
const HELP: Record<string, string> = {
  saga_messaging_broker_up: 'Whether every AMQP connection the service needs is open (1) or not (0).',
  saga_messaging_broker_blocked:
    'Whether the broker blocks a connection of the service (1, connection.blocked: see /health for the reason) or not (0).',
  saga_messaging_relay_pending:
    'Outbox rows waiting to be published to the broker. Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_oldest_pending_age_seconds:
    'Age of the oldest outbox row waiting to be published, in seconds (0 when none waits). Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_parked:
    'Outbox rows parked after using up their publish attempts. Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_published_total: 'Outbox rows the broker confirmed since the process started.',
  saga_messaging_relay_failed_total: 'Outbox publish attempts that failed since the process started.',
  saga_messaging_relay_parked_total: 'Outbox rows parked since the process started.',
  saga_messaging_consumer_handled_total: 'Deliveries whose handler transaction committed, by handler.',
  saga_messaging_consumer_duplicates_total:
    'Deliveries the inbox had already seen, acknowledged without running the handler, by handler.',
  saga_messaging_consumer_retried_total: 'Handler failures that were scheduled for a retry, by handler.',
  saga_messaging_consumer_dead_lettered_total:
    'Messages moved to the dead-letter queue (poison or out of attempts), by handler.',
  saga_messaging_consuming:
    'Whether this instance consumes every one of its handler queues (1) or not (0). Per instance: min by (job) finds one that stopped.',
  saga_messaging_consumer_in_flight:
    'Deliveries being worked on now (running or waiting for a slot or a retry), by handler.',
}

/** The HELP text of a messaging series: a sentence describing it, never just its name. */
export function helpOf(name: string): string {
  return (
    HELP[name] ?? `Value ${name.replace(/^saga_messaging_/, '')} of the @saga/messaging metrics snapshot.`
  )
}

const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^a-zA-Z0-9_]/g, '_')
    .toLowerCase()

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

function sample(key: string, value: number, labels: Record<string, string>): MessagingSample {
  const name = `saga_messaging_${key}`
  // Prometheus base units: durations in seconds (https://prometheus.io/docs/practices/naming/).
  if (name.endsWith('_ms'))
    return { name: `${name.slice(0, -3)}_seconds`, kind: 'gauge', value: value / 1000, labels }
  return { name, kind: name.endsWith('_total') ? 'counter' : 'gauge', value, labels }
}

/**
 * Maps a messaging `metrics()` snapshot to Prometheus samples: numeric leaves become snake_case series
 * under `saga_messaging_` (`*Ms` -> `*_seconds`, `*Total` -> counters, the rest gauges; non-numbers are
 * dropped). A `byHandler: { <name>: counters }` object yields its counters under the parent's prefix with
 * a `handler` label; the parent's own leaves of the same keys (their sums) are then left out, so summing
 * a series over its labels does not count twice.
 * E.g. `{ consumer: { handledTotal: 3, byHandler: { a: { handledTotal: 3 } } } }` ->
 * `saga_messaging_consumer_handled_total{handler="a"} 3`.
 */
export function messagingSamples(
  value: unknown,
  prefix = '',
  labels: Record<string, string> = {},
): MessagingSample[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [sample(prefix, value, labels)] : []
  if (!isRecord(value)) return []
  const byHandler = isRecord(value.byHandler) ? value.byHandler : {}
  const perHandler = new Set(Object.values(byHandler).flatMap((c) => (isRecord(c) ? Object.keys(c) : [])))
  return Object.entries(value).flatMap(([key, inner]) => {
    if (key === 'byHandler')
      return Object.entries(byHandler).flatMap(([handler, counters]) =>
        messagingSamples(counters, prefix, { ...labels, handler }),
      )
    if (perHandler.has(key)) return []
    return messagingSamples(inner, prefix ? `${prefix}_${snake(key)}` : snake(key), labels)
  })
}
