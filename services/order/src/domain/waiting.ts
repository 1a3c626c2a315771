/**
 * Which step a PENDING order waits for, derived from the saga map (@saga/contracts): the API's
 * `waitingFor`, its filter and the console's counts read it. Pure; the SQL form of the same rule
 * is in store/waiting.ts and is built from `WAIT_STEPS`.
 */
import {
  allEvents,
  nextAfter,
  sagaFacts,
  WAITING_FOR,
  type EventContract,
  type WaitingForName as WaitingFor,
} from '@saga/contracts'

export { WAITING_FOR, type WaitingFor }

/** One wait of a PENDING order: from the fact `after` (its versioned type) on, it waits for `service`. */
export interface WaitStep {
  after: string
  service: WaitingFor
}

const isWaitingFor = (service: string): service is WaitingFor =>
  (WAITING_FOR as readonly string[]).includes(service)

const contractOf = (routingKey: string): EventContract => {
  const contract = allEvents.find((event) => event.routingKey === routingKey)
  if (!contract) throw new Error(`no contract has the routing key '${routingKey}'`)
  return contract
}

/**
 * The waits of a PENDING order in chain order, by walking the confirmed saga (`sagaFacts()`): after
 * each fact, the step another service must take next (`nextAfter`). The order service's own step
 * (confirming on ShipmentCreated) is no wait: it runs in the transaction that records the fact.
 * With the fleet's map: order.created -> payment, payment.processed -> inventory, stock.reserved ->
 * shipment.
 */
export const WAIT_STEPS: readonly WaitStep[] = sagaFacts().flatMap((fact) =>
  nextAfter(fact)
    .map((next) => next.service)
    .filter(isWaitingFor)
    .map((service) => ({ after: contractOf(fact).type, service })),
)

/**
 * The step a PENDING order waits for, given the versioned types in its timeline: the wait of the
 * latest step in chain order whose fact is there (a later fact recorded before an earlier one, as
 * the batch recorder may, still counts), else the first wait (an order whose timeline holds none of
 * the facts).
 */
export function waitingFor(seenTypes: Iterable<string>): WaitingFor {
  const seen = new Set(seenTypes)
  const reached = WAIT_STEPS.findLast((step) => seen.has(step.after))
  return (reached ?? firstWait()).service
}

/** The first wait of every order: the step that reacts to OrderCreated (`payment`). */
function firstWait(): WaitStep {
  const first = WAIT_STEPS[0]
  if (!first) throw new Error('the saga map has no step after its first fact')
  return first
}
