import { SERVICES, type ServiceName } from '@saga/contracts'
import {
  buildChoreography,
  type Choreography,
  type ChoreographyInput,
  type PlacedDeadLetter,
} from './choreography.js'
import type { FleetSnapshot } from './fleet.js'
import { roadAhead, type PendingStep } from './road-ahead.js'
import type { AdminAction, DeadLetterPage, InboxRow, OrderView, OutboxRecord } from './shapes.js'
import { UpstreamError, type Upstream } from './upstream.js'

/** Most message ids per inbox lookup (the admin route takes 1-200). */
const INBOX_CHUNK = 200

/** How each service answered the join's reads: ok, or the reason of its first failure. */
export type SourceStates = Record<ServiceName, { ok: boolean; reason: string | null }>

/** `GET /api/orders/:id`: the order, its choreography and which services could be read. */
export interface OrderDetail extends Choreography {
  at: string
  order: OrderView
  sources: SourceStates
  /** TRACE_URL_TEMPLATE, for the UI's trace links; null when unset. */
  traceUrlTemplate: string | null
  /** The steps the saga map says come next, with why the ones waited for wait (`roadAhead`). */
  ahead: PendingStep[]
}

/** Options of `readOrderDetail`. */
export interface ReadOrderDetailOptions {
  /** TRACE_URL_TEMPLATE, passed to the UI; null when unset. */
  traceUrlTemplate: string | null
  /**
   * The fleet poll to judge the steps ahead by (health, queues): the poller's shared snapshot, so a
   * page read costs the services no probe of its own. Read beside the order's reads. Without it, or
   * when it fails, the steps ahead have no service or queue reasons.
   */
  fleet?: (() => Promise<FleetSnapshot>) | undefined
  now?: (() => Date) | undefined
}

type Reads = Omit<ChoreographyInput, 'order' | 'inbox'>

const q = encodeURIComponent

/** Why a read of a service failed, without the service's name (`sources` is keyed by it). */
const reasonOf = (error: unknown): string =>
  error instanceof UpstreamError ? error.reason : error instanceof Error ? error.message : String(error)

/** Records, dead letters, parked rows and actions of one service; a failed read is noted in `sources`. */
async function readService(
  upstream: Upstream,
  service: ServiceName,
  orderId: string,
  reads: Reads,
  sources: SourceStates,
) {
  const note = (error: unknown) => {
    if (sources[service].ok) sources[service] = { ok: false, reason: reasonOf(error) }
    return undefined
  }
  const [records, dead, parked, actions] = await Promise.all([
    upstream
      .json<{ outbox: OutboxRecord[] }>(service, `/admin/messaging/records?aggregateId=${q(orderId)}`)
      .catch(note),
    upstream
      .json<DeadLetterPage>(service, `/admin/messaging/dead-letters?aggregateId=${q(orderId)}&limit=100`)
      .catch(note),
    upstream
      .json<{ rows: OutboxRecord[] }>(service, `/admin/messaging/parked?aggregateId=${q(orderId)}&limit=100`)
      .catch(note),
    upstream.json<{ actions: AdminAction[] }>(service, '/admin/messaging/actions?limit=50').catch(note),
  ])
  if (records) reads.records[service] = records.outbox
  if (dead) {
    reads.deadLetters[service] = dead.queues.flatMap((queue): PlacedDeadLetter[] =>
      queue.messages.map((m) => ({ ...m, service, queue: queue.queue })),
    )
  }
  if (parked) reads.parked[service] = parked.rows
  if (actions) reads.actions[service] = actions.actions
}

/** Which of `ids` each service's handlers consumed (inbox lookups of at most 200 ids each). */
async function readInbox(upstream: Upstream, service: ServiceName, ids: string[]): Promise<InboxRow[]> {
  const rows: InboxRow[] = []
  for (let i = 0; i < ids.length; i += INBOX_CHUNK) {
    const query = ids
      .slice(i, i + INBOX_CHUNK)
      .map((id) => `messageId=${q(id)}`)
      .join('&')
    const page = await upstream.json<{ inbox: InboxRow[] }>(service, `/admin/messaging/inbox?${query}`)
    rows.push(...page.inbox)
  }
  return rows
}

/**
 * Reads one order from every service and joins it (`buildChoreography`): the order from the order
 * service (`GET /orders/:id`), then from each service at once its outbox records, dead letters and
 * parked rows for the order id and its recent actions, then each service's inbox for the message ids
 * found. A service that fails or times out is left out and named in `sources`; only the order
 * itself is required. The road ahead (`roadAhead`) is judged by the fleet poll read meanwhile.
 * @throws UpstreamError when the order service does not answer the order (404 included)
 */
export async function readOrderDetail(
  upstream: Upstream,
  orderId: string,
  options: ReadOrderDetailOptions,
): Promise<OrderDetail> {
  const { traceUrlTemplate, now = () => new Date() } = options
  const fleetRead = options.fleet?.().catch(() => null) ?? Promise.resolve(null)
  const order = await upstream.json<OrderView>('order', `/orders/${q(orderId)}`)
  const sources = Object.fromEntries(SERVICES.map((s) => [s, { ok: true, reason: null }])) as SourceStates
  const reads: Reads = { records: {}, deadLetters: {}, parked: {}, actions: {} }
  await Promise.all(SERVICES.map((service) => readService(upstream, service, orderId, reads, sources)))
  const ids = new Set<string>()
  for (const rows of Object.values(reads.records)) for (const row of rows) ids.add(row.id)
  for (const event of order.events) {
    const id = event.messageId ?? event.id
    if (id !== undefined) ids.add(id)
  }
  const inbox: ChoreographyInput['inbox'] = {}
  if (ids.size > 0) {
    await Promise.all(
      SERVICES.map(async (service) => {
        try {
          inbox[service] = await readInbox(upstream, service, [...ids])
        } catch (error) {
          if (sources[service].ok) sources[service] = { ok: false, reason: reasonOf(error) }
        }
      }),
    )
  }
  const choreography = buildChoreography({ order, inbox, ...reads }, now())
  const unread = SERVICES.filter((s) => !sources[s].ok)
  const ahead = roadAhead({ order, choreography, unread, fleet: await fleetRead })
  return { at: now().toISOString(), order, sources, traceUrlTemplate, ...choreography, ahead }
}
