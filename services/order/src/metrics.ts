import type { FailedStep } from '@saga/contracts'
import { Counter, Histogram, type Registry } from 'prom-client'
import { cancellationLabel } from './domain/order.js'
import { onFinalState } from './orders/transition.js'

/**
 * The order service's own series on `/metrics` (beside service-kit's HTTP, database and messaging
 * series), all made and registered here. Counted in the process that made the change, when it made
 * it; a handler transaction that fails to commit after counting (rare: the commit itself failed) is
 * retried and may count twice.
 */
export interface OrderMetrics {
  /** An order became CANCELLED; `failedStep` names the step for a step's failure. */
  cancelled(reason: string, failedStep: FailedStep | undefined): void
  /** `count` deadlines fired (orders cancelled with `deadline_exceeded`) in one claim. */
  deadlinesFired(count: number): void
}

/** Metrics that count nowhere: unit tests and reactions built without an app. */
export const noMetrics: OrderMetrics = { cancelled() {}, deadlinesFired() {} }

/** The series' name, for the alert rules' and dashboard's check (packages/fleet/test/observability). */
export const TIME_TO_FINAL_STATE = 'saga_order_time_to_final_state_seconds'

// Seconds. A saga takes tens of milliseconds on a quiet fleet and minutes while a step's broker or
// database is away (or until an order's deadline); the p99 alert needs buckets above its threshold.
const FINAL_STATE_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800]

/**
 * Makes the order service's series:
 * - `saga_order_cancellations_total{cause}` (cause one of payment, stock, shipment,
 *   deadline_exceeded, customer_requested: bounded whatever reason codes the steps use);
 * - `saga_order_deadlines_fired_total`;
 * - `saga_order_time_to_final_state_seconds{status}`: one observation per order that becomes
 *   CONFIRMED or CANCELLED (`status`), its age then in seconds, from created_at, on the database's
 *   clock (`onFinalState`).
 *
 * The counters count from the start; `register` adds all three to `registry` once the metrics
 * plugin made it (the reactions are built before it), starts observing final states, and returns
 * the function that stops observing (the app's onClose). Call `register` once per registry.
 */
export function createOrderMetrics(): OrderMetrics & { register(registry: Registry): () => void } {
  const cancellations = new Counter({
    name: 'saga_order_cancellations_total',
    help:
      'Orders this process turned CANCELLED, by cause: the failed step (payment, stock, shipment), ' +
      'deadline_exceeded or customer_requested.',
    labelNames: ['cause'],
    registers: [],
  })
  for (const cause of ['payment', 'stock', 'shipment', 'deadline_exceeded', 'customer_requested']) {
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
      return onFinalState(({ status, seconds }) => timeToFinalState.observe({ status }, seconds))
    },
    cancelled: (reason, failedStep) => cancellations.inc({ cause: cancellationLabel(reason, failedStep) }),
    deadlinesFired: (count) => fired.inc(count),
  }
}
