/**
 * What the saga expects after each fact (design.md, "The chain"): the routing keys that must follow
 * a fact, as alternatives (one of them) per step. Pure; used by `where` to say what an order waits for.
 */
const NEXT: Record<string, { service: string; oneOf: string[] }[]> = {
  'order.created': [{ service: 'payment', oneOf: ['payment.processed', 'payment.failed'] }],
  'payment.processed': [{ service: 'inventory', oneOf: ['stock.reserved', 'stock.reservation-failed'] }],
  'payment.failed': [{ service: 'order', oneOf: ['order.cancelled'] }],
  'stock.reserved': [{ service: 'shipment', oneOf: ['shipment.created', 'shipment.failed'] }],
  'stock.reservation-failed': [
    { service: 'order', oneOf: ['order.cancelled'] },
    { service: 'payment', oneOf: ['payment.refunded'] },
  ],
  'shipment.created': [{ service: 'order', oneOf: ['order.confirmed'] }],
  'shipment.failed': [
    { service: 'order', oneOf: ['order.cancelled'] },
    { service: 'payment', oneOf: ['payment.refunded'] },
    { service: 'inventory', oneOf: ['stock.released'] },
  ],
}

/** The terminal facts of an order. */
export const TERMINAL = new Set(['order.confirmed', 'order.cancelled'])

/** Which service publishes a routing key (its first segment's owner). */
export function publisherOf(routingKey: string): string {
  const head = routingKey.split('.')[0]
  return head === 'stock' ? 'inventory' : (head ?? '?')
}

/**
 * The events an order still waits for, given the routing keys of the facts seen so far, each with
 * the service expected to produce it. Empty when the saga is complete (terminal and every
 * compensation done). Before any fact, it waits for `order.created`.
 */
export function waitingFor(seen: readonly string[]): { service: string; oneOf: string[] }[] {
  const facts = new Set(seen)
  if (facts.size === 0) return [{ service: 'order', oneOf: ['order.created'] }]
  const waits: { service: string; oneOf: string[] }[] = []
  for (const fact of facts) {
    for (const step of NEXT[fact] ?? []) {
      if (!step.oneOf.some((k) => facts.has(k))) waits.push(step)
    }
  }
  return waits
}
