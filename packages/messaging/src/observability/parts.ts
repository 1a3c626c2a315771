import type { AmqpConnection } from '../amqp/connection.js'
import type { Consumer, ConsumerMetrics } from '../inbox/consumer.js'
import { noCounters } from '../inbox/counters.js'
import type { Relay } from '../outbox/relay.js'
import { idleRelayStats, type RelayStats } from '../outbox/stats.js'
import type { BatchRecorder } from '../recorder/recorder.js'
import type { RecorderCounters } from '../recorder/types.js'

/** The running parts of one messaging instance that health and metrics read; each absent when disabled. */
export interface MessagingParts {
  relay: Relay | undefined
  consumer: Consumer | undefined
  recorders: readonly BatchRecorder[]
  /** The connection the consumer and recorders share. */
  consumerConnection: AmqpConnection | undefined
}

/**
 * Every counter and gauge of one instance now, as one typed object: what the metric descriptors
 * read, and what a test or a person asks for. Durations in ms, counts since the process started.
 */
export interface MessagingStats {
  /** 1 when every AMQP connection the instance needs is open, else 0. */
  brokerUp: number
  /** 1 while the broker blocks a connection of the instance (`connection.blocked`), else 0. */
  brokerBlocked: number
  /** The relay's figures (pending ones about a second old at most), without when they were read. */
  relay: Omit<RelayStats, 'refreshedAt' | 'refreshedAtMono'>
  /** Handler counters, summed and per handler. */
  consumer: ConsumerMetrics
  /** Batch recorders' counters, summed and per recorder (absent without recorders). */
  recorder?: RecorderCounters & { byHandler: Record<string, RecorderCounters> }
}

/** The stats of `parts` now (see `MessagingStats`). */
export function messagingStats(parts: MessagingParts): MessagingStats {
  const { relay, consumer, recorders, consumerConnection } = parts
  const { refreshedAt: _at, refreshedAtMono: _mono, ...relayStats } = relay?.stats() ?? idleRelayStats()
  const up = (relay?.isConnected ?? true) && (consumerConnection?.isConnected ?? true)
  const blocked = relay?.blocked !== undefined || consumerConnection?.blocked !== undefined
  return {
    brokerUp: up ? 1 : 0,
    brokerBlocked: blocked ? 1 : 0,
    relay: relayStats,
    consumer: consumer?.metrics() ?? { ...noCounters(), byHandler: {} },
    ...(recorders.length > 0 ? { recorder: recorderStats(recorders) } : {}),
  }
}

/** The recorders' counters, summed, and per recorder under `byHandler`. */
function recorderStats(recorders: readonly BatchRecorder[]): NonNullable<MessagingStats['recorder']> {
  const total: RecorderCounters = { recordedTotal: 0, batchesTotal: 0, splitTotal: 0, deadLetteredTotal: 0 }
  const byHandler: Record<string, RecorderCounters> = {}
  for (const recorder of recorders) {
    byHandler[recorder.name] = { ...recorder.counters }
    for (const key of Object.keys(total) as Array<keyof RecorderCounters>)
      total[key] += recorder.counters[key]
  }
  return { ...total, byHandler }
}
