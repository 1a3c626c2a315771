/**
 * The shapes of the console's own API (`/api/*`), for the server and the UI alike: the UI imports
 * them type-only, so a change of shape fails its typecheck. No runtime code, no fastify types.
 */
import type { ServiceName } from '@saga/contracts'

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

/** `GET /api/session`: who is signed in, and whether writes are possible at all. */
export interface SessionView {
  signedIn: boolean
  actor: string | null
  writesEnabled: boolean
}
