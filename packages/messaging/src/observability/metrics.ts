import type { HandlerCounters } from '../inbox/handle-delivery.js'
import type { RecorderCounters } from '../recorder/types.js'
import type { Signals } from '../signals.js'
import type { MessagingHealth } from './health.js'
import type { MessagingStats } from './parts.js'

/** One value of a counter or gauge, with its labels. */
export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

interface MetricBase {
  /** The full Prometheus name, units in it (`_seconds`, `_total`), e.g. `messaging_relay_pending`. */
  readonly name: string
  /** The HELP text: one sentence saying what it measures, and how to aggregate it where that matters. */
  readonly help: string
  /** The label names every sample carries (`[]` or `['handler']`). */
  readonly labelNames: readonly string[]
}

/** A counter or gauge: its samples are read at every scrape. */
export interface ValueMetric extends MetricBase {
  readonly kind: 'counter' | 'gauge'
  /** The samples now, in base units (seconds, counts). A counter's value only grows while the process runs. */
  read(): readonly MetricSample[]
}

/** A histogram: its observations are pushed as they happen. */
export interface HistogramMetric extends MetricBase {
  readonly kind: 'histogram'
  /** Upper bounds of the buckets, in the metric's unit (seconds). */
  readonly buckets: readonly number[]
  /** Calls `record` with each observation (labels, value in seconds) until the returned function is called. */
  observe(record: (labels: Readonly<Record<string, string>>, value: number) => void): () => void
}

/**
 * What a metrics host (prom-client, OpenTelemetry) registers: name, help, kind, labels, and how to
 * read or observe it. Messaging owns the facts; a host needs no knowledge of their shape.
 */
export type MetricDescriptor = ValueMetric | HistogramMetric

/** What the descriptors read; `stats` and `health` are called at most once per scrape. */
export interface MetricSources {
  stats(): MessagingStats
  health(): MessagingHealth
  signals: Signals
  /** Whether the instance runs batch recorders (their series exist only then). */
  recorders: boolean
}

// Seconds. Handler transactions take milliseconds; outbox lag and confirms stretch to seconds
// during a broker outage, so the buckets reach 60 s (an alert on the p99 needs a bucket above it).
const FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const SLOW = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

const PER_DATABASE =
  'Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.'

type Read = (stats: MessagingStats) => number
type ReadPer = (stats: MessagingStats) => Readonly<Record<string, number>>

/** The handler (or recorder) counters of `byHandler`, one per name. */
const perHandler =
  <C>(counters: (stats: MessagingStats) => Record<string, C> | undefined, key: keyof C): ReadPer =>
  (stats) =>
    Object.fromEntries(Object.entries(counters(stats) ?? {}).map(([name, c]) => [name, c[key] as number]))

const consumerCounter = (key: keyof HandlerCounters): ReadPer =>
  perHandler((stats) => stats.consumer.byHandler, key)
const recorderCounter = (key: keyof RecorderCounters): ReadPer =>
  perHandler((stats) => stats.recorder?.byHandler, key)

/** A counter or gauge of the instance as a whole (`Read`) or per handler or recorder (`ReadPer`). */
interface Definition<R extends Read | ReadPer> {
  kind: 'counter' | 'gauge'
  name: string
  help: string
  read: R
}

/** The instance's gauges and counters by name (without the prefix): HELP text and reader. */
const GAUGES: Record<string, [help: string, read: Read]> = {
  broker_up: ['Whether every AMQP connection the service needs is open (1) or not (0).', (s) => s.brokerUp],
  broker_blocked: [
    'Whether the broker blocks a connection of the service (1, connection.blocked: see /health for the reason) or not (0).',
    (s) => s.brokerBlocked,
  ],
  relay_pending: [
    `Outbox rows waiting to be published to the broker. ${PER_DATABASE}`,
    (s) => s.relay.pending,
  ],
  relay_oldest_pending_age_seconds: [
    `Age of the oldest outbox row waiting to be published, in seconds (0 when none waits). ${PER_DATABASE}`,
    (s) => s.relay.oldestPendingAgeMs / 1000,
  ],
  relay_parked: [
    `Outbox rows parked after using up their publish attempts. ${PER_DATABASE}`,
    (s) => s.relay.parked,
  ],
}
const COUNTERS: Record<string, [help: string, read: Read]> = {
  relay_published_total: [
    'Outbox rows the broker confirmed since the process started.',
    (s) => s.relay.publishedTotal,
  ],
  relay_failed_total: [
    'Outbox publish attempts that failed since the process started.',
    (s) => s.relay.failedTotal,
  ],
  relay_parked_total: ['Outbox rows parked since the process started.', (s) => s.relay.parkedTotal],
  relay_refused_total: [
    'Outbox rows the broker refused for themselves (e.g. over its max_message_size), parked at once, since the process started.',
    (s) => s.relay.refusedTotal,
  ],
}
const INSTANCE: readonly Definition<Read>[] = [
  ...Object.entries(GAUGES).map(([name, [help, read]]) => ({ kind: 'gauge' as const, name, help, read })),
  ...Object.entries(COUNTERS).map(([name, [help, read]]) => ({ kind: 'counter' as const, name, help, read })),
]

/** A counter's key as its metric name: `deadLetteredTotal` -> `dead_lettered_total`. */
const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** The HELP text of every handler counter, in the order they are listed (gauges in `HANDLER_GAUGES`). */
const HANDLER_HELP: Record<keyof HandlerCounters, string> = {
  handledTotal: 'Deliveries whose handler transaction committed, by handler.',
  duplicatesTotal:
    'Deliveries the inbox had already seen, acknowledged without running the handler, by handler.',
  retriedTotal: 'Handler failures that were scheduled for a retry, by handler.',
  deadLetteredTotal: 'Messages moved to the dead-letter queue (poison or out of attempts), by handler.',
  inFlight: 'Deliveries being worked on now (running or waiting for a slot or a retry), by handler.',
  batchesTotal:
    'Handler transactions that took two or more deliveries of the queue and committed, by handler.',
  transientRetriedTotal:
    'Handler transactions that failed for transient database reasons (a lost connection, a terminated session, a deadlock) and were retried without spending an attempt, by handler.',
  batchFallbacksTotal:
    'Such batch transactions rolled back (a handler or the commit failed), whose deliveries were then handled one by one, by handler.',
  heldTotal: 'Holds of a newer version than the handler takes, by handler.',
  held: 'Deliveries of a newer version than the handler takes held now, by handler.',
  orderWaitedTotal:
    'Ordered deliveries that came before their predecessor and were held in the database, by handler.',
  orderReleasedTotal:
    'Held ordered deliveries handled once their predecessor was (in handled_total too), by handler.',
  orderPutBackTotal:
    'Held ordered deliveries that failed when released and were put back into the queue for its retries, by handler.',
  orderSettledTotal:
    'Keys first seen above sequence 1 (numbered before the handler saw them) whose cursor started just below their lowest held delivery after the settle window, by handler.',
  orderBlocked: `Keys blocked by a dead-lettered message, by handler. ${PER_DATABASE}`,
  orderWaiting: `Ordered deliveries held for their predecessor, by handler. ${PER_DATABASE}`,
  orderGaps: `Keys whose held deliveries wait past the gap time for a predecessor that has not come, by handler. ${PER_DATABASE}`,
}

/** The handler counters that are gauges (a value now, not a running total). */
const HANDLER_GAUGES: ReadonlySet<string> = new Set([
  'inFlight',
  'held',
  'orderBlocked',
  'orderWaiting',
  'orderGaps',
])

const HANDLERS: readonly Definition<ReadPer>[] = Object.entries(HANDLER_HELP).map(([key, help]) => ({
  kind: HANDLER_GAUGES.has(key) ? 'gauge' : 'counter',
  name: `consumer_${snake(key)}`,
  help,
  read: consumerCounter(key as keyof HandlerCounters),
}))

/** The HELP text of every recorder counter. */
const RECORDER_HELP: Record<keyof RecorderCounters, string> = {
  recordedTotal:
    'Messages a batch recorder wrote (or found already written), by handler (the recorder name).',
  batchesTotal: 'Statements a batch recorder ran, one per batch, by handler.',
  splitTotal: 'Batches the database refused and a recorder retried one message at a time, by handler.',
  deadLetteredTotal:
    'Messages a batch recorder dead-lettered (invalid, or refused alone by the database), by handler.',
}

const RECORDERS: readonly Definition<ReadPer>[] = Object.entries(RECORDER_HELP).map(([key, help]) => ({
  kind: 'counter',
  name: `recorder_${snake(key)}`,
  help,
  read: recorderCounter(key as keyof RecorderCounters),
}))

const CONSUMING_HELP =
  'Whether this instance consumes every one of its handler and recorder queues (1) or not (0). Per instance: min by (job) finds one that stopped.'

/**
 * The metrics of one instance, under `prefix` (`messaging` unless the host names its own). `stats`
 * and `health` are read once per scrape (the descriptors share a snapshot for 100 ms).
 */
export function messagingMetrics(prefix: string, sources: MetricSources): MetricDescriptor[] {
  const snapshot = memo(() => sources.stats())
  const healthNow = memo(() => sources.health())
  const instance = INSTANCE.map((d): ValueMetric => ({
    kind: d.kind,
    name: `${prefix}_${d.name}`,
    help: d.help,
    labelNames: [],
    read: () => [{ labels: {}, value: d.read(snapshot()) }],
  }))
  const perHandler = [...HANDLERS, ...(sources.recorders ? RECORDERS : [])].map((d): ValueMetric => ({
    kind: d.kind,
    name: `${prefix}_${d.name}`,
    help: d.help,
    labelNames: ['handler'],
    read: () =>
      Object.entries(d.read(snapshot())).map(([handler, value]) => ({ labels: { handler }, value })),
  }))
  const consuming: ValueMetric = {
    kind: 'gauge',
    name: `${prefix}_consuming`,
    help: CONSUMING_HELP,
    labelNames: [],
    read: () => [{ labels: {}, value: healthNow().areas.find((a) => a.area === 'consumer')?.ok ? 1 : 0 }],
  }
  return [...instance, ...perHandler, consuming, ...histograms(prefix, sources.signals)]
}

/** Histograms fed by the signals: handler transactions, outbox lag, publisher confirm latency. */
function histograms(prefix: string, signals: Signals): HistogramMetric[] {
  return [
    {
      kind: 'histogram',
      name: `${prefix}_handler_duration_seconds`,
      help: 'Duration of committed inbox transactions (the handler and its inbox row), BEGIN to COMMIT, in seconds, by handler.',
      labelNames: ['handler'],
      buckets: FAST,
      observe: (record) =>
        signals.on('handled', (p) => {
          if (p.durationMs !== undefined) record({ handler: p.handler }, p.durationMs / 1000)
        }),
    },
    {
      kind: 'histogram',
      name: `${prefix}_outbox_lag_seconds`,
      help: 'Outbox lag of published messages: from the row occurred_at (database clock) to the broker confirm, in seconds.',
      labelNames: [],
      buckets: SLOW,
      observe: (record) =>
        signals.on('published', (p) => {
          if (p.lagMs !== undefined) record({}, p.lagMs / 1000)
        }),
    },
    {
      kind: 'histogram',
      name: `${prefix}_confirm_latency_seconds`,
      help: 'Publisher confirm latency of published messages: their batch first publish to its last confirm, in seconds.',
      labelNames: [],
      buckets: SLOW,
      observe: (record) =>
        signals.on('published', (p) => {
          if (p.confirmMs !== undefined) record({}, p.confirmMs / 1000)
        }),
    },
  ]
}

/** `read`'s value, computed at most once per 100 ms (one scrape reads many descriptors). */
function memo<T>(read: () => T): () => T {
  let value: T | undefined
  let at = -Infinity
  return () => {
    const now = performance.now()
    if (value === undefined || now - at > 100) {
      value = read()
      at = now
    }
    return value
  }
}
