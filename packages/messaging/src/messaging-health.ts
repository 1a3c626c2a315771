import type { AmqpConnection } from './amqp/connection.js'
import type { Consumer, ConsumerHealth, ConsumerMetrics } from './inbox/consumer.js'
import type { Relay } from './outbox/relay.js'
import type { BatchRecorder } from './recorder/recorder.js'
import type { RecorderCounters } from './recorder/types.js'

/** What `health()` reports; cheap and synchronous (outbox figures are refreshed in the background). */
export interface MessagingHealth {
  /** Broker reachable, consumers consuming, outbox not falling behind. */
  ready: boolean
  /** Why `ready` is false, e.g. `['broker: relay connection down']`; empty when ready. */
  problems: string[]
  /** Every AMQP connection this instance needs is open. */
  broker: boolean
  /**
   * Age of the oldest pending outbox row, ms, by the database's clock: read every second (and when
   * the relay drains), plus the time since that read while rows are pending.
   */
  oldestPendingAgeMs: number
  /**
   * `blocked` (relay and consumer): the broker's reason while it blocks that connection's publishes
   * (`connection.blocked`, e.g. `low on memory` during a memory alarm), else null. The relay waits
   * for `connection.unblocked` meanwhile instead of publishing into a timeout.
   * `statsAgeMs`: how old the pending and parked figures are, ms (-1 before the first read).
   */
  relay: {
    enabled: boolean
    connected: boolean
    pending: number
    parked: number
    blocked: string | null
    statsAgeMs: number
  }
  consumer: { enabled: boolean; connected: boolean; blocked: string | null } & ConsumerHealth
}

/** Counters and gauges; numeric leaves map to Prometheus series (`*Total` counters, `*Ms` durations). */
export interface MessagingMetrics {
  /** 1 when every needed AMQP connection is open, else 0. */
  brokerUp: number
  /** 1 while the broker blocks a connection of this instance (`connection.blocked`), else 0; the reason is in `health()`. */
  brokerBlocked: number
  relay: {
    pending: number
    oldestPendingAgeMs: number
    parked: number
    publishedTotal: number
    failedTotal: number
    parkedTotal: number
  }
  consumer: ConsumerMetrics
  /** Batch recorders' counters, summed and per recorder (absent without recorders). */
  recorder?: RecorderCounters & { byHandler: Record<string, RecorderCounters> }
}

/** The parts `messagingHealth` and `messagingMetrics` read; each absent when disabled. */
export interface MessagingParts {
  relay: Relay | undefined
  consumer: Consumer | undefined
  recorders: readonly BatchRecorder[]
  consumerConnection: AmqpConnection | undefined
}

/**
 * The health document of one instance (see `MessagingHealth`): synchronous and cheap, from what
 * the relay and consumer already know. `readyMaxOutboxAgeMs`: the oldest pending row's age, ms,
 * past which `ready` turns false.
 */
export function messagingHealth(parts: MessagingParts & { readyMaxOutboxAgeMs: number }): MessagingHealth {
  const { relay, consumer, recorders, consumerConnection, readyMaxOutboxAgeMs } = parts
  const stats = relay?.stats()
  const consumerHealth = consumer?.health() ?? {
    consuming: true,
    transactions: { limit: 0, running: 0, waiting: 0 },
    handlers: {},
  }
  const relayConnected = relay?.isConnected ?? true
  const consumerConnected = consumerConnection?.isConnected ?? true
  const oldestPendingAgeMs = stats?.oldestPendingAgeMs ?? 0
  const relayBlocked = relay?.blocked ?? null
  const consumerBlocked = consumerConnection?.blocked ?? null
  const problems: string[] = []
  if (!relayConnected) problems.push('broker: relay connection down')
  if (!consumerConnected) problems.push('broker: consumer connection down')
  if (relayBlocked !== null) problems.push(`broker: relay connection blocked by the broker (${relayBlocked})`)
  if (consumerBlocked !== null)
    problems.push(`broker: consumer connection blocked by the broker (${consumerBlocked})`)
  const recording = recorders.every((recorder) => recorder.consuming)
  if (consumerConnected && !(consumerHealth.consuming && recording))
    problems.push('consumer: not consuming every queue')
  if (oldestPendingAgeMs > readyMaxOutboxAgeMs) {
    problems.push(
      `outbox: oldest pending row is ${oldestPendingAgeMs} ms old (limit ${readyMaxOutboxAgeMs} ms)`,
    )
  }
  return {
    ready: problems.length === 0,
    problems,
    broker: relayConnected && consumerConnected,
    oldestPendingAgeMs,
    relay: {
      enabled: relay !== undefined,
      connected: relayConnected,
      pending: stats?.pending ?? 0,
      parked: stats?.parked ?? 0,
      blocked: relayBlocked,
      statsAgeMs:
        stats?.refreshedAtMono === undefined ? -1 : Math.round(performance.now() - stats.refreshedAtMono),
    },
    consumer: {
      enabled: consumer !== undefined,
      connected: consumerConnected,
      blocked: consumerBlocked,
      ...consumerHealth,
    },
  }
}

const NO_CONSUMER: ConsumerMetrics = {
  handledTotal: 0,
  duplicatesTotal: 0,
  retriedTotal: 0,
  deadLetteredTotal: 0,
  inFlight: 0,
  batchesTotal: 0,
  batchFallbacksTotal: 0,
  byHandler: {},
}

/** The metrics snapshot of one instance (see `MessagingMetrics`). */
export function messagingMetrics(parts: MessagingParts): MessagingMetrics {
  const { relay, consumer, recorders, consumerConnection } = parts
  const stats = relay?.stats()
  const up = (relay?.isConnected ?? true) && (consumerConnection?.isConnected ?? true)
  return {
    brokerUp: up ? 1 : 0,
    brokerBlocked:
      (relay?.blocked ?? null) !== null || (consumerConnection?.blocked ?? null) !== null ? 1 : 0,
    relay: {
      pending: stats?.pending ?? 0,
      oldestPendingAgeMs: stats?.oldestPendingAgeMs ?? 0,
      parked: stats?.parked ?? 0,
      publishedTotal: stats?.publishedTotal ?? 0,
      failedTotal: stats?.failedTotal ?? 0,
      parkedTotal: stats?.parkedTotal ?? 0,
    },
    consumer: consumer?.metrics() ?? { ...NO_CONSUMER, byHandler: {} },
    ...(recorders.length > 0 ? { recorder: recorderMetrics(recorders) } : {}),
  }
}

/** The recorders' counters, summed, and per recorder under `byHandler` (labelled like handlers in /metrics). */
function recorderMetrics(recorders: readonly BatchRecorder[]): NonNullable<MessagingMetrics['recorder']> {
  const total: RecorderCounters = { recordedTotal: 0, batchesTotal: 0, splitTotal: 0, deadLetteredTotal: 0 }
  const byHandler: Record<string, RecorderCounters> = {}
  for (const recorder of recorders) {
    byHandler[recorder.name] = { ...recorder.counters }
    for (const key of Object.keys(total) as Array<keyof RecorderCounters>)
      total[key] += recorder.counters[key]
  }
  return { ...total, byHandler }
}
