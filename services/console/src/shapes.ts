/**
 * What the services answer, typed from where the services define it: the messaging admin surface's
 * answers from @saga/messaging-admin, the order service's from @saga/contracts. Times are ISO 8601
 * strings (UTC), durations ms, ids UUIDs. The console passes these through or joins them; it does not
 * validate them (the services own their shapes).
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

// The order service's answers are @saga/contracts' (`order-api.ts`): the zod schemas the order
// service serialises them with and documents them by, so one definition serves both ends.
export type {
  OrderEventView as TimelineEvent,
  OrderPage,
  OrderStats,
  OrderStatsBucket as StatsBucket,
  OrderSummary,
  OrderView,
} from '@saga/contracts'
