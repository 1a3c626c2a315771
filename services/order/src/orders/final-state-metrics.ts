import { Histogram, type Registry } from '@saga/service-kit'
import { onFinalState } from './transition.js'

/** The series' name, for the alert rules' and dashboard's check (packages/fleet/test/observability). */
export const TIME_TO_FINAL_STATE = 'saga_order_time_to_final_state_seconds'

// Seconds. A saga takes tens of milliseconds on a quiet fleet and minutes while a step's broker or
// database is away (or until an order's deadline); the p99 alert needs buckets above its threshold.
const BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800]

/**
 * Registers `saga_order_time_to_final_state_seconds{status}` on `registry`: one observation per
 * order that becomes CONFIRMED or CANCELLED (`status`), its age then, from created_at, on the
 * database's clock (`onFinalState`). Returns the function that stops observing (the app's onClose).
 */
export function registerTimeToFinalState(registry: Registry): () => void {
  const histogram = new Histogram({
    name: TIME_TO_FINAL_STATE,
    help: 'Time from an order created to it CONFIRMED or CANCELLED (label status), database clock, in seconds.',
    labelNames: ['status'],
    buckets: BUCKETS,
    registers: [registry],
  })
  return onFinalState(({ status, seconds }) => histogram.observe({ status }, seconds))
}
