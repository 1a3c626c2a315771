/**
 * What the services answer, as the console contract (issue 21, part 1 and 2) fixes it. Times are ISO
 * 8601 strings (UTC), durations ms, ids UUIDs. The console passes these through or joins them; it
 * does not validate them (the services own their shapes), so readers treat every field as possibly
 * missing when a service answers an older shape.
 */

/** `GET /admin/messaging/summary`. */
export interface MessagingSummary {
  service: string
  at: string
  broker: 'connected' | 'down'
  outbox: {
    pending: number
    parked: number
    oldestPendingAt: string | null
    oldestPendingAgeMs: number | null
  }
  queues: {
    handler: string
    queue: string
    ready: number | null
    consumers: number | null
    deadLetterQueue: string
    deadLettered: number | null
  }[]
}

/** One outbox row (`GET /admin/messaging/records`, `/parked`). */
export interface OutboxRecord {
  id: string
  type: string
  routingKey: string
  aggregateId: string
  correlationId: string | null
  causationId: string | null
  state: 'pending' | 'published' | 'parked'
  attempts: number
  lastError: string | null
  occurredAt: string
  publishedAt: string | null
  failedAt: string | null
  payload: unknown
  /** The W3C trace id of the row's `traceparent`, where the service exposes it (not in the contract). */
  traceId?: string | null
  headers?: Record<string, unknown>
}

/** One inbox row: which handler of the service consumed the message, when. */
export interface InboxRow {
  messageId: string
  handler: string
  receivedAt: string
}

/** One message in a dead-letter queue. */
export interface DeadLetter {
  messageId: string
  type: string
  routingKey: string
  correlationId: string | null
  causationId: string | null
  aggregateId: string | null
  reason: string
  handler: string
  deadLetteredAt: string | null
  payload: unknown
}

/** `GET /admin/messaging/dead-letters`. */
export interface DeadLetterPage {
  service: string
  queues: { queue: string; handler: string; count: number; messages: DeadLetter[] }[]
}

/** One recorded admin action (`GET /admin/messaging/actions`). */
export interface AdminAction {
  id: string
  at: string
  actor: string
  action: string
  target: string
  ids: string[]
  detail: unknown
}

/** One 10-second bucket of `GET /orders/stats`. */
export interface StatsBucket {
  at: string
  confirmed: number
  cancelled: number
  latencyP50Ms: number | null
  latencyP99Ms: number | null
}

/** `GET /orders/stats`. */
export interface OrderStats {
  at: string
  byStatus: { PENDING: number; CONFIRMED: number; CANCELLED: number }
  pendingByStep: { payment: number; inventory: number; shipment: number }
  pendingOverdue: number
  buckets: StatsBucket[]
}

/** An order as `GET /orders` lists it. */
export interface OrderSummary {
  id: string
  customerId: string
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED'
  currency: string
  total: number
  waitingFor?: string | null
  cancellationReason: string | null
  failedStep: string | null
  createdAt: string
  updatedAt: string
  deadlineAt: string | null
}

/** `GET /orders`. */
export interface OrderPage {
  items: OrderSummary[]
  nextCursor: string | null
}

/** One fact of an order's timeline (`GET /orders/:id`, `events`). */
export interface TimelineEvent {
  id?: string
  messageId?: string
  type: string
  source: string
  occurredAt: string
  recordedAt: string
  note: string | null
}

/** `GET /orders/:id`. */
export interface OrderView extends OrderSummary {
  confirmedAt: string | null
  cancelledAt: string | null
  events: TimelineEvent[]
  [key: string]: unknown
}
