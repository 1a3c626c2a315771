import { MESSAGING_METRIC_HELP } from '@saga/messaging'

/** One Prometheus sample of the messaging snapshot, in base units (seconds). */
export interface MessagingSample {
  /** e.g. `saga_messaging_consumer_handled_total`. */
  name: string
  kind: 'counter' | 'gauge'
  value: number
  /** `{ handler }` for the per-handler consumer counters, else `{}`. */
  labels: Record<string, string>
}

/** The HELP text of a messaging series: a sentence describing it, never just its name. */
export function helpOf(name: string): string {
  return (
    MESSAGING_METRIC_HELP[name] ??
    `Value ${name.replace(/^saga_messaging_/, '')} of the @saga/messaging metrics snapshot.`
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
