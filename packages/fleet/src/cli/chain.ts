import {
  firstFact,
  nextAfter,
  OrderCancelled,
  producerOf,
  sagaMap,
  terminalFacts,
  type Expected,
} from '@saga/contracts'

/** The terminal facts of an order (the saga map's `terminalFacts`). */
export const TERMINAL = new Set(terminalFacts.map((e) => e.routingKey))

/** Which service publishes a routing key (the saga map's producers); `?` for a key the map does not know. */
export function publisherOf(routingKey: string): string {
  try {
    return producerOf(routingKey)
  } catch {
    return '?'
  }
}

/** The failure facts that make the order service cancel (those a reaction answers with OrderCancelled). */
const CANCELLING_FAILURES = new Set(
  sagaMap.filter((r) => r.mayEmit.includes(OrderCancelled)).map((r) => r.reactsTo.routingKey),
)

/**
 * The events an order still waits for, given the routing keys of the facts seen so far, each with
 * the service expected to produce it (derived from the saga map). Empty when the saga is complete
 * (terminal and every compensation done). Before any fact, it waits for `order.created`. An order
 * cancelled by the order service itself (its deadline, its customer or an operator: `order.cancelled` without a
 * step's failure before it) waits for nothing: each step undoes what it did, if anything, and a
 * step fact still in flight (a late `shipment.created`) is answered by nobody.
 */
export function waitingFor(seen: readonly string[]): Expected[] {
  const facts = new Set(seen)
  if (facts.size === 0) return [{ service: producerOf(firstFact.routingKey), oneOf: [firstFact.routingKey] }]
  if (facts.has(OrderCancelled.routingKey) && ![...facts].some((f) => CANCELLING_FAILURES.has(f))) return []
  const waits: Expected[] = []
  for (const fact of facts) {
    for (const step of nextAfter(fact)) {
      if (!step.oneOf.some((k) => facts.has(k))) waits.push(step)
    }
  }
  return waits
}
