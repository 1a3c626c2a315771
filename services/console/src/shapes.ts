/**
 * What the services answer, as the console contract (issue 21, part 1 and 2) fixes it. Times are ISO
 * 8601 strings (UTC), durations ms, ids UUIDs. The console passes these through or joins them; it
 * does not validate them (the services own their shapes), so readers treat every field as possibly
 * missing when a service answers an older shape.
 */

// The messaging admin surface's answers are @saga/messaging-admin's own types (its README.md,
// "Routes"): the console reads what the package serialises, so one definition serves both ends.
export type {
  AdminAction,
  DeadLetter,
  InboxRecord as InboxRow,
  MessagingSummary,
  OutboxRecord,
} from '@saga/messaging-admin'
import type { DeadLetterQueueView } from '@saga/messaging-admin'

/** `GET /admin/messaging/dead-letters`. */
export interface DeadLetterPage {
  service: string
  queues: DeadLetterQueueView[]
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
