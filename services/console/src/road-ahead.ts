import { stepsAhead, type ServiceName } from '@saga/contracts'
import { classify, type Branch, type Choreography, type FactKind, type FactNode } from './choreography.js'
import type { FleetSnapshot, ServiceSnapshot } from './fleet.js'
import type { OrderView } from './shapes.js'

/**
 * Why a step the saga waits for has not happened, from what the console already reads: the fleet
 * poll (a service's health and since when, its queue's figures) and the order's join (the fact's
 * outbox row, its consumers' inbox receipts, its dead letters, the order's deadline). Times ISO 8601.
 *
 * - `service`: the step's service is not up (`health`, the poll's `reason`, `since` when).
 * - `queue`: the step's queue: messages ready and consumers; `stale` with `asOf` when the figures
 *   are the last ones read because the service's summary cannot be read now.
 * - `unpublished`: the fact the step reacts to is still in its producer's outbox, `pending` (not
 *   yet published, `attempts` so far) or `parked` (given up after its attempts, until a retry).
 * - `not-consumed`: the fact was published (`since`) and the step's handler has not recorded it;
 *   `inboxRead` false when the service's inbox could not be read, so whether it did is unknown.
 * - `dead-letter`: the step's handler dead-lettered the fact (`queue`, `reason`, `at`).
 * - `deadline`: the order's deadline and the ms left at the join (`leftMs`, negative when overdue).
 */
export type WaitReason =
  | {
      kind: 'service'
      service: ServiceName
      health: 'down' | 'degraded'
      reason: string | null
      since: string
    }
  | {
      kind: 'queue'
      queue: string
      ready: number | null
      consumers: number | null
      stale: boolean
      asOf: string | null
    }
  | {
      kind: 'unpublished'
      messageId: string
      producer: ServiceName | null
      state: 'pending' | 'parked'
      attempts: number
      lastError: string | null
    }
  | { kind: 'not-consumed'; messageId: string; since: string | null; inboxRead: boolean }
  | { kind: 'dead-letter'; messageId: string; queue: string; reason: string | null; at: string | null }
  | { kind: 'deadline'; deadlineAt: string; leftMs: number }

/**
 * A step of the saga map still ahead of the order, drawn as a pending node after the last fact.
 * `after` is the node it follows: the message id of the fact it reacts to when `waiting` (the saga
 * waits for it now), else the id of the step ahead whose success it reacts to (null when that fact
 * is not a node of the graph). `reasons` are said for a waiting step only.
 */
export interface PendingStep {
  /** `ahead:<service>:<handler>`: unique in one order's graph (a handler acts once per order). */
  id: string
  service: ServiceName
  handler: string
  /** The routing key of the fact it reacts to. */
  reactsTo: string
  /** The routing keys it may emit: success first, then failure. */
  oneOf: string[]
  branch: Branch
  kind: FactKind
  after: string | null
  waiting: boolean
  reasons: WaitReason[]
}

/**
 * What `roadAhead` reads: the order, its join, the services the join could not read (`unread`:
 * their inboxes are unknown), and the fleet poll (null when there is none).
 */
export interface RoadAheadInput {
  order: OrderView
  choreography: Pick<Choreography, 'nodes' | 'deadline'>
  unread: readonly ServiceName[]
  fleet: Pick<FleetSnapshot, 'services'> | null
}

/** The service's health as a reason, when it is not up. */
function serviceReason(snapshot: ServiceSnapshot | undefined): WaitReason[] {
  if (snapshot === undefined || snapshot.health === 'up') return []
  const { service, health, reason, healthSince } = snapshot
  return [{ kind: 'service', service, health, reason, since: healthSince }]
}

/** The handler's queue as the fleet poll last read it. */
function queueReason(snapshot: ServiceSnapshot | undefined, handler: string): WaitReason[] {
  if (snapshot === undefined || snapshot.queues.state === 'unknown') return []
  const figures = snapshot.queues.items.find((q) => q.handler === handler)
  if (figures === undefined) return []
  const stale = snapshot.queues.state === 'stale'
  const { queue, ready, consumers } = figures
  return [{ kind: 'queue', queue, ready, consumers, stale, asOf: snapshot.queues.readAt }]
}

/** Where the fact stands between its producer's outbox and the step's handler. */
function factReasons(
  fact: FactNode,
  service: ServiceName,
  handler: string,
  inboxRead: boolean,
): WaitReason[] {
  const messageId = fact.id
  if (fact.state === 'pending' || fact.state === 'parked') {
    const { producer, state, attempts, lastError } = fact
    return [{ kind: 'unpublished', messageId, producer, state, attempts, lastError }]
  }
  const letters = fact.deadLetters
    .filter((d) => d.service === service && (d.handler === handler || d.queue.includes(handler)))
    .map((d): WaitReason => {
      const { queue, reason, deadLetteredAt: at } = d
      return { kind: 'dead-letter', messageId, queue, reason, at }
    })
  const consumer = fact.consumers.find((c) => c.service === service && c.handler === handler)
  const notConsumed: WaitReason[] =
    consumer !== undefined && consumer.receivedAt === null
      ? [{ kind: 'not-consumed', messageId, since: fact.publishedAt ?? fact.occurredAt, inboxRead }]
      : []
  return [...letters, ...notConsumed]
}

/**
 * The order's road ahead: the steps the saga map says come next (`stepsAhead` of @saga/contracts,
 * from the routing keys of the facts so far), each placed after the node it follows, and for each
 * step the saga waits for now, why it has not happened yet (`WaitReason`, in the order: the
 * service, its queue, the fact, the deadline). An ended order has no step of the branch not taken,
 * only the compensations it still owes. Pure.
 */
export function roadAhead({ order, choreography, unread, fleet }: RoadAheadInput): PendingStep[] {
  const ended = order.status !== 'PENDING'
  const { nodes, deadline } = choreography
  // The latest fact of each routing key (nodes are in the order they occurred).
  const latest = new Map(nodes.map((n) => [n.routingKey, n]))
  const steps = stepsAhead([...latest.keys()], ended)
  const byFact = new Map<string, string>()
  return steps.map((step): PendingStep => {
    const id = `ahead:${step.service}:${step.handler}`
    const fact = step.waiting ? latest.get(step.reactsTo) : undefined
    const after = fact?.id ?? byFact.get(step.reactsTo) ?? null
    if (!byFact.has(step.oneOf[0]!)) byFact.set(step.oneOf[0]!, id)
    const base = { id, ...step, ...classify(step.oneOf[0]!), after }
    if (!step.waiting || fact === undefined) return { ...base, reasons: [] }
    const snapshot = fleet?.services.find((s) => s.service === step.service)
    const left: WaitReason[] =
      !ended && deadline.deadlineAt !== null && deadline.timeLeftMs !== null
        ? [{ kind: 'deadline', deadlineAt: deadline.deadlineAt, leftMs: deadline.timeLeftMs }]
        : []
    const reasons = [
      ...serviceReason(snapshot),
      ...queueReason(snapshot, step.handler),
      ...factReasons(fact, step.service, step.handler, !unread.includes(step.service)),
      ...left,
    ]
    return { ...base, reasons }
  })
}
