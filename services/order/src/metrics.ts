import type { FailedStep } from '@saga/contracts'
import { Counter, type Registry } from 'prom-client'
import { cancellationLabel } from './domain/order.js'

/**
 * The order service's own counters on `/metrics` (beside service-kit's HTTP, database and messaging
 * series). Counted in the process that made the change, when it made it; a handler transaction that
 * fails to commit after counting (rare: the commit itself failed) is retried and may count twice.
 */
export interface OrderMetrics {
  /** An order became CANCELLED; `failedStep` names the step for a step's failure. */
  cancelled(reason: string, failedStep: FailedStep | undefined): void
  /** `count` deadlines fired (orders cancelled with `deadline_exceeded`) in one claim. */
  deadlinesFired(count: number): void
}

/** Metrics that count nowhere: unit tests and reactions built without an app. */
export const noMetrics: OrderMetrics = { cancelled() {}, deadlinesFired() {} }

/**
 * Makes `saga_order_cancellations_total{cause}` (cause one of payment, stock, shipment,
 * deadline_exceeded, customer_requested: bounded whatever reason codes the steps use) and
 * `saga_order_deadlines_fired_total`. They count from the start; `register` adds them to the app's
 * registry once the metrics plugin made it (the reactions are built before it).
 */
export function createOrderMetrics(): OrderMetrics & { register(registry: Registry): void } {
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
  return {
    register(registry) {
      registry.registerMetric(cancellations)
      registry.registerMetric(fired)
    },
    cancelled: (reason, failedStep) => cancellations.inc({ cause: cancellationLabel(reason, failedStep) }),
    deadlinesFired: (count) => fired.inc(count),
  }
}
