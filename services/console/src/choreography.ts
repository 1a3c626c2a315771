import { producerOf, sagaFacts, sagaMap, SERVICES, type ServiceName } from '@saga/contracts'
import type { AdminAction, DeadLetter, InboxRow, OrderView, OutboxRecord } from './shapes.js'

/** Which branch of the choreography a fact is on: the confirmed walk, or failure and undo. */
export type Branch = 'forward' | 'compensation'
/** What a fact is: a step of the confirmed walk, a decision's failure, or an undo of a failure. */
export type FactKind = 'step' | 'failure' | 'compensation'

/** The confirmed walk of the saga map: OrderCreated ... OrderConfirmed. */
const FORWARD = new Set(sagaFacts())
/** The second alternative of each decision (PaymentFailed, StockReservationFailed, ShipmentFailed). */
const FAILURES = new Set(
  sagaMap.flatMap((r) => (r.mayEmit.length > 1 ? r.mayEmit.slice(1).map((e) => e.routingKey) : [])),
)

/** The routing key of a versioned type: `payment.processed.v1` -> `payment.processed`. */
export const routingKeyOf = (type: string): string => type.replace(/\.v\d+$/, '')

/** A fact's branch and kind from the saga map (every fact off the confirmed walk is compensation). */
export function classify(routingKey: string): { branch: Branch; kind: FactKind } {
  if (FORWARD.has(routingKey)) return { branch: 'forward', kind: 'step' }
  return { branch: 'compensation', kind: FAILURES.has(routingKey) ? 'failure' : 'compensation' }
}

/** A handler that consumed (or should consume) a fact. */
export interface Consumer {
  service: ServiceName
  handler: string
  /** When its inbox recorded the message; null when it has not (yet). */
  receivedAt: string | null
  /** Whether the saga map names this handler for the fact. */
  expected: boolean
}

/** A dead letter with the service and queue it sits in. */
export interface PlacedDeadLetter extends DeadLetter {
  service: ServiceName
  queue: string
}

/** A parked outbox row with the service whose outbox holds it. */
export interface PlacedRecord extends OutboxRecord {
  service: ServiceName
}

/** One fact of the order: a node of the causal graph, keyed by its message id. */
export interface FactNode {
  id: string
  type: string
  routingKey: string
  producer: ServiceName | null
  branch: Branch
  kind: FactKind
  /** pending/published/parked from the producer's outbox; `seen` when only a consumer or DLQ knows it. */
  state: OutboxRecord['state'] | 'seen'
  causationId: string | null
  attempts: number
  lastError: string | null
  occurredAt: string | null
  publishedAt: string | null
  failedAt: string | null
  consumers: Consumer[]
  deadLetters: {
    service: ServiceName
    queue: string
    handler: string | null
    reason: string | null
    deadLetteredAt: string | null
  }[]
  /** A forward fact that occurred after the order had ended (e.g. a capture after the deadline). */
  late: boolean
  /** The order timeline's note for it, if any. */
  note: string | null
  /** The W3C trace id of the producing transaction, when the producer exposes it; for trace links. */
  traceId: string | null
  /** The entity the fact is about (CloudEvents `subject`), from the producer's outbox or a dead letter. */
  aggregateId: string | null
  /** The payload (CloudEvents `data`): the producer's outbox row's, else a dead letter's; null when neither is read. */
  payload: unknown
  /**
   * The producer's outbox row's stored headers (`correlationId`, `causationId`, `traceparent`,
   * `tracestate`, `occurredAt`, `dataschema`); null when the row was not read.
   */
  headers: Record<string, string> | null
}

/** A causation edge: `to` was caused by (handled from) `from`. */
export interface CausalEdge {
  from: string
  to: string
}

/** What the join reads, per service (undefined where the service did not answer). */
export interface ChoreographyInput {
  order: OrderView
  records: Partial<Record<ServiceName, OutboxRecord[]>>
  inbox: Partial<Record<ServiceName, InboxRow[]>>
  deadLetters: Partial<Record<ServiceName, PlacedDeadLetter[]>>
  parked: Partial<Record<ServiceName, OutboxRecord[]>>
  actions: Partial<Record<ServiceName, AdminAction[]>>
}

/** The order's choreography: facts, causation, dead letters, parked rows and actions. */
export interface Choreography {
  nodes: FactNode[]
  edges: CausalEdge[]
  deadLetters: PlacedDeadLetter[]
  parked: PlacedRecord[]
  actions: (AdminAction & { service: ServiceName })[]
  /** The order's deadline and the ms left (null once it is not PENDING). */
  deadline: { deadlineAt: string | null; timeLeftMs: number | null; overdue: boolean }
}

const entries = <V>(partial: Partial<Record<ServiceName, V>>): [ServiceName, V][] =>
  SERVICES.flatMap((s) => (partial[s] === undefined ? [] : [[s, partial[s]] as [ServiceName, V]]))

const safeProducer = (routingKey: string): ServiceName | null => {
  try {
    return producerOf(routingKey)
  } catch {
    return null
  }
}

function emptyNode(id: string, type: string): FactNode {
  const routingKey = routingKeyOf(type)
  return {
    id,
    type,
    routingKey,
    producer: safeProducer(routingKey),
    ...classify(routingKey),
    state: 'seen',
    causationId: null,
    attempts: 0,
    lastError: null,
    occurredAt: null,
    publishedAt: null,
    failedAt: null,
    consumers: [],
    deadLetters: [],
    late: false,
    note: null,
    traceId: null,
    aggregateId: null,
    payload: null,
    headers: null,
  }
}

/** The nodes from every outbox (the producers' truth), then the timeline and the dead letters. */
function collectNodes(input: ChoreographyInput): Map<string, FactNode> {
  const nodes = new Map<string, FactNode>()
  for (const [service, rows] of entries(input.records)) {
    for (const row of rows) {
      nodes.set(row.id, {
        ...emptyNode(row.id, row.type),
        producer: service,
        state: row.state,
        causationId: row.causationId,
        attempts: row.attempts,
        lastError: row.lastError,
        occurredAt: row.occurredAt,
        publishedAt: row.publishedAt,
        failedAt: row.failedAt,
        traceId: row.traceId ?? null,
        aggregateId: row.aggregateId,
        payload: row.payload ?? null,
        headers: row.headers ?? null,
      })
    }
  }
  for (const event of input.order.events) {
    const id = event.messageId ?? event.id
    if (id === undefined) continue
    const node = nodes.get(id) ?? { ...emptyNode(id, event.type), occurredAt: event.occurredAt }
    node.note = event.note
    nodes.set(id, node)
  }
  for (const [, letters] of entries(input.deadLetters)) {
    for (const letter of letters) {
      // A message without an id (not published by an outbox) cannot be a fact of the graph.
      if (letter.messageId === null || nodes.has(letter.messageId)) continue
      nodes.set(letter.messageId, {
        ...emptyNode(letter.messageId, letter.type ?? 'unknown'),
        causationId: letter.causationId,
        aggregateId: letter.aggregateId,
        payload: letter.payload ?? null,
      })
    }
  }
  return nodes
}

/** The order service's batch recorder of the timeline (the saga map's `record-timeline`). */
const TIMELINE_RECORDER = 'record-timeline'

/** Each node's consumers: the saga map's handlers for it, with the inbox's receipt when there is one. */
function attachConsumers(nodes: Map<string, FactNode>, input: ChoreographyInput): void {
  for (const node of nodes.values()) {
    for (const reaction of sagaMap) {
      if (reaction.reactsTo.routingKey !== node.routingKey) continue
      if (node.consumers.some((c) => c.service === reaction.service && c.handler === reaction.handler))
        continue
      node.consumers.push({
        service: reaction.service,
        handler: reaction.handler,
        receivedAt: null,
        expected: true,
      })
    }
  }
  for (const [service, rows] of entries(input.inbox)) {
    for (const row of rows) {
      const node = nodes.get(row.messageId)
      if (!node) continue
      const known = node.consumers.find((c) => c.service === service && c.handler === row.handler)
      if (known) known.receivedAt = row.receivedAt
      else node.consumers.push({ service, handler: row.handler, receivedAt: row.receivedAt, expected: false })
    }
  }
  // The order service records the other services' facts in its timeline in batches, without an inbox
  // row per message; its own facts enter the timeline in the transaction that produced them, so its
  // recorder has nothing to do for them and is not shown as a consumer still to come.
  for (const event of input.order.events) {
    const node = nodes.get(event.messageId ?? event.id ?? '')
    const recorder = node?.consumers.find((c) => c.service === 'order' && c.receivedAt === null)
    if (!node || !recorder) continue
    if (event.source !== 'order') recorder.receivedAt = event.recordedAt
    else if (recorder.handler === TIMELINE_RECORDER)
      node.consumers.splice(node.consumers.indexOf(recorder), 1)
  }
}

/** The moment the order ended (confirmed or cancelled), ms since the epoch, or null while PENDING. */
const endedAt = (order: OrderView): number | null => {
  const at = order.confirmedAt ?? order.cancelledAt
  return at === null || at === undefined ? null : Date.parse(at)
}

/**
 * Joins what the services answered about one order into its choreography: every fact as a node keyed
 * by message id (from the producers' outboxes, the order's timeline and the dead-letter queues),
 * causation edges (`causationId` -> id, where both are known), each fact's consumers (the saga map's
 * handlers, with the inbox's receipt times), the dead letters and parked rows of the order, the
 * actions that touched its messages or the order, and its deadline. Pure: `now` is passed in.
 */
export function buildChoreography(input: ChoreographyInput, now: Date): Choreography {
  const nodes = collectNodes(input)
  attachConsumers(nodes, input)
  const deadLetters = entries(input.deadLetters).flatMap(([, letters]) => letters)
  for (const letter of deadLetters) {
    if (letter.messageId === null) continue
    const { service, queue, handler, reason, deadLetteredAt } = letter
    nodes.get(letter.messageId)?.deadLetters.push({ service, queue, handler, reason, deadLetteredAt })
  }
  const ended = endedAt(input.order)
  for (const node of nodes.values()) {
    const occurred = node.occurredAt === null ? NaN : Date.parse(node.occurredAt)
    const terminal = node.routingKey === 'order.confirmed' || node.routingKey === 'order.cancelled'
    node.late =
      (ended !== null && node.branch === 'forward' && !terminal && occurred > ended) ||
      /after the order (had )?ended/i.test(node.note ?? '')
  }
  // In the order they occurred; facts known only from a dead-letter queue (no time) last.
  const time = (n: FactNode) => (n.occurredAt === null ? Number.MAX_SAFE_INTEGER : Date.parse(n.occurredAt))
  const sorted = [...nodes.values()].sort((a, b) => time(a) - time(b))
  const edges = sorted.flatMap((n) =>
    n.causationId !== null && nodes.has(n.causationId) ? [{ from: n.causationId, to: n.id }] : [],
  )
  const touched = new Set([input.order.id, ...nodes.keys()])
  const actions = entries(input.actions)
    .flatMap(([service, list]) => list.map((a) => ({ ...a, service })))
    .filter((a) => a.ids.some((id) => touched.has(id)) || a.target.includes(input.order.id))
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
  const parked = entries(input.parked).flatMap(([service, rows]) => rows.map((r) => ({ ...r, service })))
  const deadlineAt = input.order.deadlineAt
  const pending = input.order.status === 'PENDING' && deadlineAt !== null
  const timeLeftMs = pending ? Date.parse(deadlineAt) - now.getTime() : null
  return {
    nodes: sorted,
    edges,
    deadLetters,
    parked,
    actions,
    deadline: { deadlineAt, timeLeftMs, overdue: timeLeftMs !== null && timeLeftMs < 0 },
  }
}
