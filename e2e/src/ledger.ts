import type { PlaceOrder } from './api.js'

/** One order the suite placed. */
export interface PlacedOrder {
  id: string
  body: PlaceOrder
  /** Local time the POST was sent (ms since epoch). */
  sentAt: number
}

/**
 * What a scenario did, for the invariant checker: the stock it set per SKU, the orders it placed,
 * and the copies it published itself (duplicates, poison) so the tap's counts can be judged.
 */
export class Ledger {
  readonly stock = new Map<string, number>()
  readonly orders: PlacedOrder[] = []
  /** Message id -> number of copies the test itself published to the exchange. */
  readonly injected = new Map<string, number>()

  add(order: PlacedOrder): PlacedOrder {
    this.orders.push(order)
    return order
  }

  inject(messageId: string): void {
    this.injected.set(messageId, (this.injected.get(messageId) ?? 0) + 1)
  }
}
