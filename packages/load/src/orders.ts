import { randomUUID } from 'node:crypto'
import type { HttpClient } from './http.js'
import type { SagaTimes } from './stats.js'

/**
 * The sku every load order buys. The harness sets its stock before a run (PUT /stock/:sku on the
 * inventory service), so a long run never turns into out-of-stock cancellations that would change
 * the path a saga takes.
 */
export const LOAD_SKU = 'LOAD-TEST-001'
/** Units set on `LOAD_SKU` before each run: more than any run places (1 unit per order). */
const LOAD_STOCK = 10_000_000

/** The body of one order: the happy path (captured, reserved, shipped), one line of one unit, EUR minor units. */
export const orderBody = (n: number) => ({
  customerId: randomUUID(),
  currency: 'EUR',
  items: [{ sku: LOAD_SKU, quantity: 1, unitPrice: 1999 }],
  shippingAddress: {
    name: `Load ${n}`,
    line1: '1 Benchmark Road',
    city: 'Berlin',
    postalCode: '10115',
    country: 'DE',
  },
  paymentMethod: 'tok_visa',
})

/** Sets the load sku's stock; throws naming the inventory service when it refuses or is unreachable. */
export async function prepareStock(http: HttpClient, inventoryUrl: string): Promise<void> {
  const result = await http.request('PUT', `${inventoryUrl}/stock/${LOAD_SKU}`, { available: LOAD_STOCK })
  if (result.status !== 200) {
    throw new Error(
      `PUT ${inventoryUrl}/stock/${LOAD_SKU} answered ${result.status || result.error}; is the fleet running?`,
    )
  }
}

/** An order as the list endpoint shows it. */
interface OrderSummary {
  id: string
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED'
  createdAt: string
  updatedAt: string
  cancellationReason: string | null
}

/** The end state of the run's orders: times per order id, and how many ended in each status. */
export interface OrdersRead {
  sagas: Map<string, SagaTimes & { status: OrderSummary['status'] }>
  byStatus: Record<string, number>
  /** Requests the read took (pages of 100). */
  requests: number
}

/**
 * Reads every order created since `since` (epoch ms) once, newest first, in pages of 100 from
 * `GET /orders` (keyset paging, no OFFSET), keeping the ids in `ids`. The terminal time of an order
 * is its `updatedAt`: the order service changes it only on the transition to CONFIRMED or
 * CANCELLED, and a terminal state never changes again.
 */
export async function readOrders(
  http: HttpClient,
  orderUrl: string,
  ids: ReadonlySet<string>,
  since: number,
): Promise<OrdersRead> {
  const sagas: OrdersRead['sagas'] = new Map()
  const byStatus: Record<string, number> = {}
  let cursor: string | null = null
  let requests = 0
  for (;;) {
    const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page = await http.request('GET', `${orderUrl}/orders?${query}`)
    requests += 1
    if (page.status !== 200) throw new Error(`GET ${orderUrl}/orders answered ${page.status || page.error}`)
    const { items, nextCursor } = page.body as { items: OrderSummary[]; nextCursor: string | null }
    let older = false
    for (const order of items) {
      const createdAt = Date.parse(order.createdAt)
      if (createdAt < since) older = true
      if (!ids.has(order.id)) continue
      const terminal = order.status !== 'PENDING'
      sagas.set(order.id, {
        status: order.status,
        createdAt,
        terminalAt: terminal ? Date.parse(order.updatedAt) : undefined,
      })
      const key = order.status === 'CANCELLED' ? `CANCELLED ${order.cancellationReason}` : order.status
      byStatus[key] = (byStatus[key] ?? 0) + 1
    }
    // Newest first: once a page reaches orders older than the run (less a clock margin), stop.
    if (older || nextCursor === null) break
    cursor = nextCursor
  }
  return { sagas, byStatus, requests }
}

/**
 * Whether any order of this run is still PENDING: one request for the newest PENDING order. Polled
 * once a second after the last POST, so waiting for the fleet to drain costs the fleet nothing.
 */
export async function anyPendingSince(http: HttpClient, orderUrl: string, since: number): Promise<boolean> {
  const page = await http.request('GET', `${orderUrl}/orders?status=PENDING&limit=1`)
  if (page.status !== 200) return true
  const { items } = page.body as { items: OrderSummary[] }
  return items.some((order) => Date.parse(order.createdAt) >= since)
}
