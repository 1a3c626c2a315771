/**
 * The shapes of the console's own API (`/api/*`), for the server and the UI alike: the UI imports
 * them type-only, so a change of shape fails its typecheck. No runtime code, no fastify types.
 */
import type { ServiceName } from '@saga/contracts'
import type { SkipOutcome, StuckKey } from '@saga/messaging-admin'

export type {
  FleetSnapshot,
  OrdersSnapshot,
  ProbeState,
  QueueFigures,
  ServiceQueues,
  ServiceSnapshot,
} from './fleet.js'
export type { OrderDetail, SourceStates } from './order-join.js'
export type { SearchAnswer, SearchMatch } from './search.js'
export type { CausalEdge, Consumer, FactNode, PlacedDeadLetter, PlacedRecord } from './choreography.js'
export type { PendingStep, WaitReason } from './road-ahead.js'
export type { AdminAction, OrderPage, OrderStats, OrderSummary } from './shapes.js'

/** `POST /api/actions` body (validated by the server's `ActionBody` schema). */
export interface ActionRequest {
  kind: 'requeue' | 'discard' | 'retry' | 'cancel'
  service: ServiceName
  /** The dead-letter queue, for requeue and discard. */
  queue?: string | undefined
  /** Message ids (requeue, discard), outbox row ids (retry) or order ids (cancel); 1-500. */
  ids: string[]
  dryRun: boolean
}

/** One field a service refused, and why (the `details` of its 4xx error shape). */
export interface ErrorDetail {
  path: string
  issue: string
}

/** One order of a cancel action, as `POST /api/actions` answers it. */
export interface CancelResult {
  id: string
  outcome: 'cancelled' | 'would-cancel' | 'not-pending' | 'not-found' | 'failed'
  /** The order service's HTTP status, null when it did not answer. */
  status: number | null
  /** The order service's message (its error shape's), or why it did not answer; null on success. */
  message: string | null
  /** The action the order service recorded for this order; null for a dry run or a refusal. */
  actionId: string | null
  /** What the order service found wrong with the request (a 4xx's `details`); empty otherwise. */
  details: ErrorDetail[]
}

/** One outcome of a dead-letter or parked-row action, as the service answers it. */
export interface ActionOutcome {
  messageId?: string
  id?: string
  outcome: string
}

/** `POST /api/actions`'s answer: the service's `{ dryRun, actionId, results }`. */
export interface ActionAnswer {
  dryRun: boolean
  actionId: string | null
  results: (ActionOutcome | CancelResult)[]
}

/** `GET /api/actions`: every service's recorded actions, newest first, and which could be read. */
export interface ActionsPage {
  actions: (import('./shapes.js').AdminAction & { service: string })[]
  sources: Record<string, { ok: boolean; reason: string | null }>
}

/**
 * `GET /api/session`: who is signed in and as which role (`viewer` reads, `operator` acts),
 * whether writes are possible at all (ADMIN_TOKEN set) and whether anyone can sign in (either token set).
 */
export interface SessionView {
  signedIn: boolean
  actor: string | null
  role: 'viewer' | 'operator' | null
  writesEnabled: boolean
  signInEnabled: boolean
  /** Whether `/api/` answers 401 without a session: the console has CONSOLE_VIEWER_TOKEN. */
  readsNeedSignIn: boolean
}

/**
 * `POST /api/bulk` body: a bulk requeue or discard of dead letters, retry of parked rows (on
 * `services`, default all) or cancel of PENDING orders (the order service), by filter, as a dry run
 * or for real, up to `limit` per service at most `ratePerSecond`.
 */
export interface BulkRequest {
  kind: 'requeue' | 'discard' | 'retry' | 'cancel'
  services?: ServiceName[] | undefined
  /** Dead letters and parked rows: handler (dead letters only), type, reason, since, until. Orders: the rest. */
  filter: {
    handler?: string | undefined
    type?: string | undefined
    reason?: string | undefined
    since?: string | undefined
    until?: string | undefined
    waitingFor?: 'payment' | 'inventory' | 'shipment' | undefined
    placedAfter?: string | undefined
    placedBefore?: string | undefined
    deadlineBefore?: string | undefined
  }
  dryRun: boolean
  limit?: number | undefined
  ratePerSecond?: number | undefined
}

/** A service's bulk job, as it answers it (`@saga/messaging-admin`'s `BulkJob`). */
export type { BulkJob as ServiceBulkJob } from '@saga/messaging-admin'

/** One service's dry run: its count (null when it did not answer) and a few of the matches. */
export interface BulkServicePreview {
  service: ServiceName
  matched: number | null
  /** False when the service counted only the first of very many dead letters. */
  complete: boolean
  /** Dead letters, parked rows or order ids. */
  sample: unknown[]
  /** Why the service did not answer, or null. */
  error: string | null
}

/** `POST /api/bulk` dry run's answer: the matches of every service, summed. */
export interface BulkPreview {
  dryRun: true
  kind: BulkRequest['kind']
  matched: number
  services: BulkServicePreview[]
}

/** One service's job of a bulk action, as read now (null with the reason when it could not be read). */
export interface BulkServiceJob {
  service: ServiceName
  job: import('@saga/messaging-admin').BulkJob | null
  error: string | null
}

/** `POST /api/bulk` (run), `GET /api/bulk/:id`, `POST /api/bulk/:id/stop`: a bulk action's progress. */
export interface BulkProgress {
  id: string
  kind: BulkRequest['kind']
  filter: BulkRequest['filter']
  startedAt: string
  /** `running` while any service's job runs; then `failed`, `stopped` or `done`. */
  state: 'running' | 'stopped' | 'done' | 'failed'
  matched: number
  done: number
  failed: number
  /** The recorded actions, as `service:id`: one per service that acted. */
  actionIds: string[]
  services: BulkServiceJob[]
}

/**
 * An ordered key that does not move, as a service's `GET /admin/messaging/ordered-keys` lists it
 * (@saga/messaging-admin `StuckKey`: `blocked` by a dead letter or with a `gap`; since when, by
 * which message, how many wait), with its service.
 */
export type OrderedKey = StuckKey & { service: ServiceName }

/** `GET /api/ordered-keys`: every service's stuck ordered keys, oldest first, and which could be read. */
export interface OrderedKeysPage {
  keys: OrderedKey[]
  sources: Record<string, { ok: boolean; reason: string | null }>
}

/** `POST /api/ordered-keys/skip` body: the key to skip past its dead letter or over its gap. */
export interface SkipRequest {
  service: ServiceName
  handler: string
  producer: string
  key: string
  dryRun: boolean
}

/** A skip's answer, as the service gives it (@saga/messaging-admin `skipOrdered`). */
export interface SkipAnswer {
  dryRun: boolean
  actionId: string | null
  results: SkipOutcome[]
}
