import type { QueueChannel } from '../amqp/queue-channel.js'
import type { MessagingParts } from './parts.js'

/** What messaging reports on; one `HealthArea` each. */
export type HealthAreaName = 'broker' | 'outbox' | 'consumer'

/**
 * One area of messaging's health, as data a host registers without knowing it: a readiness or
 * liveness probe, a status page, a CLI.
 */
export interface HealthArea {
  readonly area: HealthAreaName
  /** `status === 'up'`. */
  readonly ok: boolean
  /**
   * `up`: as it should be. `degraded`: not, but it is expected to recover by itself (a queue being
   * reopened, a consumer waiting for the broker). `down`: not, and waiting alone will not fix it.
   */
  readonly status: 'up' | 'degraded' | 'down'
  /**
   * What a host's probes do with it. `liveness`: a liveness probe fails while the area is `down` (a
   * queue unconsumed past `consumerStuckAfterMs` with the broker up: a restart may help). `report`:
   * shown, never gating (a dependency's state, which a restart does not fix).
   */
  readonly probe: 'liveness' | 'report'
  /** One sentence for people: what is wrong, or what is fine. */
  readonly detail: string
  /** The figures behind the sentence, e.g. `{ oldestPendingAgeMs: 1200, pending: 3 }`. */
  readonly facts: Readonly<Record<string, number | string | boolean | null>>
}

/** Messaging's health: every area, always all three, and whether all are up. */
export interface MessagingHealth {
  readonly ok: boolean
  readonly areas: readonly HealthArea[]
}

/** Thresholds of the health areas, ms. */
export interface HealthSettings {
  /** The outbox area is `down` while the oldest pending row is older than this. */
  outboxMaxAgeMs: number
  /** The consumer area is `down` once a queue stayed unconsumed this long with the broker up. */
  consumerStuckAfterMs: number
}

const area = (
  name: HealthAreaName,
  status: HealthArea['status'],
  detail: string,
  facts: HealthArea['facts'],
): HealthArea => ({
  area: name,
  ok: status === 'up',
  status,
  probe: name === 'consumer' ? 'liveness' : 'report',
  detail,
  facts,
})

/**
 * The broker area: every connection open and none blocked. Its facts name the node each connection
 * is on (`relayBroker`, `consumerBroker`: `host:port`, null while down) and the cluster's name.
 */
function brokerArea({ relay, consumerConnection }: MessagingParts): HealthArea {
  const relayConnected = relay?.isConnected ?? true
  const consumerConnected = consumerConnection?.isConnected ?? true
  const relayBlocked = relay?.blocked ?? null
  const consumerBlocked = consumerConnection?.blocked ?? null
  const problems: string[] = []
  if (!relayConnected) problems.push('relay connection down')
  if (!consumerConnected) problems.push('consumer connection down')
  if (relayBlocked !== null) problems.push(`relay connection blocked by the broker (${relayBlocked})`)
  if (consumerBlocked !== null)
    problems.push(`consumer connection blocked by the broker (${consumerBlocked})`)
  const facts = {
    relayConnected,
    consumerConnected,
    relayBlocked,
    consumerBlocked,
    relayBroker: relay?.node?.address ?? null,
    consumerBroker: consumerConnection?.node?.address ?? null,
    brokerCluster: relay?.node?.cluster ?? consumerConnection?.node?.cluster ?? null,
  }
  if (problems.length > 0) return area('broker', 'down', problems.join('; '), facts)
  return area('broker', 'up', 'every connection open', facts)
}

/** The outbox area: the oldest pending row younger than the limit. */
function outboxArea({ relay }: MessagingParts, settings: HealthSettings): HealthArea {
  const stats = relay?.stats()
  const oldestPendingAgeMs = stats?.oldestPendingAgeMs ?? 0
  const facts = { pending: stats?.pending ?? 0, oldestPendingAgeMs, parked: stats?.parked ?? 0 }
  if (oldestPendingAgeMs > settings.outboxMaxAgeMs) {
    const detail = `oldest pending row is ${oldestPendingAgeMs} ms old (limit ${settings.outboxMaxAgeMs} ms)`
    return area('outbox', 'down', detail, facts)
  }
  return area('outbox', 'up', `${facts.pending} rows pending, ${facts.parked} parked`, facts)
}

/**
 * The consumer area: every handler and recorder queue consumed. A queue not consumed is `degraded`
 * while its queue channel reopens it or waits for the broker, `down` once it stayed so with the
 * broker up for `consumerStuckAfterMs`.
 */
function consumerArea(parts: MessagingParts, settings: HealthSettings, now: number): HealthArea {
  const channels: QueueChannel[] = [
    ...(parts.consumer?.queues.map((queue) => queue.channel) ?? []),
    ...parts.recorders.map((recorder) => recorder.channel),
  ]
  const idle = channels.filter((channel) => !channel.consuming)
  const facts = { queues: channels.length, consuming: channels.length - idle.length }
  if (idle.length === 0) return area('consumer', 'up', `consuming ${channels.length} queues`, facts)
  let stuckForMs = 0
  const reasons = idle.map((channel) => {
    const since = channel.notConsumingSince
    const forMs = since === undefined ? 0 : Math.round(now - since)
    stuckForMs = Math.max(stuckForMs, forMs)
    return `${channel.queue} (${channel.problem ?? 'not consuming'}${forMs > 0 ? `, for ${forMs} ms` : ''})`
  })
  const status = stuckForMs > settings.consumerStuckAfterMs ? 'down' : 'degraded'
  return area('consumer', status, `not consuming every queue: ${reasons.join('; ')}`, {
    ...facts,
    stuckForMs,
  })
}

/**
 * The health of one instance (see `MessagingHealth`): synchronous and cheap, from what the relay,
 * the queue channels and the connections already know. `now` is `performance.now()` (tests pass their own).
 */
export function messagingHealth(
  parts: MessagingParts,
  settings: HealthSettings,
  now: number = performance.now(),
): MessagingHealth {
  const areas = [brokerArea(parts), outboxArea(parts, settings), consumerArea(parts, settings, now)]
  return { ok: areas.every((a) => a.ok), areas }
}
