import { firstFact, nextAfter, producerOf, terminalFacts, type Expected } from '@saga/contracts'

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

/**
 * The events an order still waits for, given the routing keys of the facts seen so far, each with
 * the service expected to produce it (derived from the saga map). Empty when the saga is complete
 * (terminal and every compensation done). Before any fact, it waits for `order.created`.
 */
export function waitingFor(seen: readonly string[]): Expected[] {
  const facts = new Set(seen)
  if (facts.size === 0) return [{ service: producerOf(firstFact.routingKey), oneOf: [firstFact.routingKey] }]
  const waits: Expected[] = []
  for (const fact of facts) {
    for (const step of nextAfter(fact)) {
      if (!step.oneOf.some((k) => facts.has(k))) waits.push(step)
    }
  }
  return waits
}
