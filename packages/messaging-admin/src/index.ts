/**
 * @saga/messaging-admin: reads and repairs of one service's `@saga/messaging` for operators (outbox
 * rows, inbox records, dead letters, parked rows) and the audit of admin writes
 * (`messaging_admin_action`, `recordAdminAction`). The fastify routes and the write guard are in
 * `@saga/messaging-admin/fastify`; the table's SQL in `@saga/messaging-admin/sql/messaging-admin.sql`.
 */
export {
  createMessagingAdmin,
  MessagingAdminError,
  type AdminQueue,
  type AdminWrite,
  type AdminWriteResult,
  type DeadLetterOutcome,
  type DeadLetterQueueView,
  type MessagingAdmin,
  type MessagingAdminOptions,
  type MessagingAdminSettings,
  type MessagingSummary,
} from './admin.js'
export type { BulkFilter, BulkKind, BulkPreview, BulkRequest } from './bulk.js'
export {
  BulkJobs,
  MAX_RECORDED_IDS,
  type BulkBatch,
  type BulkJob,
  type BulkJobState,
  type BulkWork,
} from './bulk-jobs.js'
export { recordAdminAction, type AdminAction, type AdminActionInput, type Queryable } from './actions.js'
export type { DeadLetter } from './dead-letters.js'
export type { SkipOutcome, StuckKey } from './ordered-keys.js'
export type {
  InboxRecord,
  OutboxRecord,
  OutboxState,
  OutboxSummary,
  RecordsSought,
} from './outbox-records.js'
