import { CancelReason, type FailedStep } from '@saga/contracts'
import type { ReactionDeps } from '@saga/messaging'
import { Counter, Histogram, type Registry } from 'prom-client'
import { cancellationLabel } from './domain/order.js'

/**
 * The order service's own series on `/metrics` (beside service-kit's HTTP, database and messaging
 * series), all made and registered here. Counted in the process that made the change, when it made
 * it; a handler transaction that fails to commit after counting (rare: the commit itself failed) is
 * retried and may count twice.
 */
export interface OrderMetrics {
  /**
   * An order became CANCELLED; `failedStep` names the step for a step's failure; `ageSeconds` is the
   * order's age then (from created_at, database clock; see `saveTransition`).
   */
  cancelled(reason: string, failedStep: FailedStep | undefined, ageSeconds: number): void
  /** An order became CONFIRMED, `ageSeconds` after it was created (database clock). */
  confirmed(ageSeconds: number): void
  /** `count` deadlines fired (orders cancelled with `deadline_exceeded`) in one claim. */
  deadlinesFired(count: number): void
}

/** Metrics that count nowhere: unit tests and reactions built without an app. */
export const noMetrics: OrderMetrics = { cancelled() {}, confirmed() {}, deadlinesFired() {} }

/**
 * What the order service's reactions get: messaging's deps (logger, clock) plus the service's
 * series (default `noMetrics`). The routes and the deadline scheduler take the same clock and
 * metrics from the app.
 */
export type OrderReactionDeps = ReactionDeps & { metrics?: OrderMetrics | undefined }

/** The series' name, for the alert rules' and dashboard's check (packages/fleet/test/observability). */
export const TIME_TO_FINAL_STATE = 'saga_order_time_to_final_state_seconds'

// Seconds. A saga takes tens of milliseconds on a quiet fleet and minutes while a step's broker or
// database is away (or until an order's deadline); the p99 alert needs buckets above its threshold.
const FINAL_STATE_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800]

/**
 * Makes the order service's series:
 * - `saga_order_cancellations_total{cause}` (cause one of payment, stock, shipment,
 *   deadline_exceeded, customer_requested, operator_requested: bounded whatever reason codes the steps use);
 * - `saga_order_deadlines_fired_total`;
 * - `saga_order_time_to_final_state_seconds{status}`: one observation per order that becomes
 *   CONFIRMED or CANCELLED (`status`), its age then in seconds, from created_at, on the database's
 *   clock (`cancelled` and `confirmed` observe it).
 *
 * The series count from the start; `register` adds all three to `registry` once the metrics plugin
 * made it (the reactions are built before it). Call `register` once per registry.
 */
export function createOrderMetrics(): OrderMetrics & { register(registry: Registry): void } {
  const cancellations = new Counter({
    name: 'saga_order_cancellations_total',
    help:
      'Orders this process turned CANCELLED, by cause: the failed step (payment, stock, shipment), ' +
      'deadline_exceeded, customer_requested or operator_requested.',
    labelNames: ['cause'],
    registers: [],
  })
  for (const cause of ['payment', 'stock', 'shipment', ...CancelReason.options]) {
    cancellations.inc({ cause }, 0)
  }
  const fired = new Counter({
    name: 'saga_order_deadlines_fired_total',
    help: 'Deadlines this process fired: PENDING orders past their deadline it cancelled (deadline_exceeded).',
    registers: [],
  })
  const timeToFinalState = new Histogram({
    name: TIME_TO_FINAL_STATE,
    help: 'Time from an order created to it CONFIRMED or CANCELLED (label status), database clock, in seconds.',
    labelNames: ['status'],
    buckets: FINAL_STATE_BUCKETS,
    registers: [],
  })
  return {
    register(registry) {
      registry.registerMetric(cancellations)
      registry.registerMetric(fired)
      registry.registerMetric(timeToFinalState)
    },
    cancelled(reason, failedStep, ageSeconds) {
      cancellations.inc({ cause: cancellationLabel(reason, failedStep) })
      timeToFinalState.observe({ status: 'CANCELLED' }, ageSeconds)
    },
    confirmed: (ageSeconds) => timeToFinalState.observe({ status: 'CONFIRMED' }, ageSeconds),
    deadlinesFired: (count) => fired.inc(count),
  }
}
