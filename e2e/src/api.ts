import { randomUUID } from 'node:crypto'

/** The body of POST /orders: money in minor units. */
export interface PlaceOrder {
  customerId: string
  currency: string
  items: Array<{ sku: string; quantity: number; unitPrice: number }>
  shippingAddress: { name: string; line1: string; city: string; postalCode: string; country: string }
  paymentMethod: string
}

/** What the suite reads from an order. */
export interface OrderView {
  id: string
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED'
  total?: unknown
  [key: string]: unknown
}

/** An order body with sensible defaults; override what a story needs. */
export function orderBody(
  lines: Array<{ sku: string; quantity: number; unitPrice?: number }>,
  { country = 'DE', paymentMethod = 'tok_visa', currency = 'EUR' } = {},
): PlaceOrder {
  return {
    customerId: randomUUID(),
    currency,
    items: lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPrice: l.unitPrice ?? 1250 })),
    shippingAddress: {
      name: 'Ada Lovelace',
      line1: '1 Analytical Way',
      city: 'Berlin',
      postalCode: '10115',
      country,
    },
    paymentMethod,
  }
}

/** Sum of quantity x unitPrice in minor units. */
export const orderTotal = (body: PlaceOrder): number =>
  body.items.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0)

async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await res.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = text
  }
  return { status: res.status, body: json }
}

/** POSTs that had to be retried (5xx or no answer), with what went wrong; reported per scenario. */
export const retriedPosts: string[] = []

/**
 * POST /orders as a careful client does it: with an `Idempotency-Key`, retrying (up to 6 attempts,
 * 250 ms more apart each time) on a 5xx or no answer, so a retry returns the first order instead of making a second.
 * Throws unless 201, naming status and body. Returns the order and the local time (ms since epoch)
 * the first request was sent, the start of its time-to-terminal. Retries are recorded in
 * `retriedPosts`: they are reported, since a 5xx is a finding even when the retry succeeds.
 */
export async function placeOrder(
  orderUrl: string,
  body: PlaceOrder,
  headers: Record<string, string> = {},
): Promise<{ order: OrderView; sentAt: number }> {
  const sentAt = Date.now()
  const withKey = { 'idempotency-key': randomUUID(), ...headers }
  for (let attempt = 1; ; attempt++) {
    let failure: string
    try {
      const res = await call('POST', `${orderUrl}/orders`, body, withKey)
      if (res.status === 201) return { order: res.body as OrderView, sentAt }
      failure = `POST /orders answered ${res.status}: ${JSON.stringify(res.body)}`
      if (res.status < 500) throw new ClientError(failure)
    } catch (error) {
      if (error instanceof ClientError) throw error
      failure = `POST /orders got no answer: ${error instanceof Error ? error.message : String(error)}`
    }
    if (attempt >= 6) throw new Error(`${failure} (after ${attempt} attempts)`)
    retriedPosts.push(failure)
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt))
  }
}

/** A 4xx: the request itself is wrong, so retrying cannot help. */
class ClientError extends Error {}

/** GET /orders/:id. */
export async function getOrder(orderUrl: string, id: string): Promise<OrderView> {
  const res = await call('GET', `${orderUrl}/orders/${id}`)
  if (res.status !== 200)
    throw new Error(`GET /orders/${id} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as OrderView
}

/**
 * POST /orders/:id/cancel as a careful client does it (the customer asks): the endpoint is
 * idempotent, so a 5xx (503 while the service is busy) or no answer is retried, up to 6 attempts,
 * 250 ms more apart each time, and recorded in `retriedPosts`. Resolves `{ status, order }`: 200 with
 * the order (cancelled now, or already cancelled for any reason) or 409 (already CONFIRMED).
 * Throws on any other answer, naming status and body.
 */
export async function cancelOrder(
  orderUrl: string,
  id: string,
): Promise<{ status: 200 | 409; order?: OrderView }> {
  for (let attempt = 1; ; attempt++) {
    let failure: string
    try {
      const res = await call('POST', `${orderUrl}/orders/${id}/cancel`)
      if (res.status === 200) return { status: 200, order: res.body as OrderView }
      if (res.status === 409) return { status: 409 }
      failure = `POST /orders/${id}/cancel answered ${res.status}: ${JSON.stringify(res.body)}`
      if (res.status < 500) throw new ClientError(failure)
    } catch (error) {
      if (error instanceof ClientError) throw error
      failure = `POST /orders/${id}/cancel got no answer: ${error instanceof Error ? error.message : String(error)}`
    }
    if (attempt >= 6) throw new Error(`${failure} (after ${attempt} attempts)`)
    retriedPosts.push(failure)
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt))
  }
}

/** PUT /stock/:sku with `{ available }` (inventory). */
export async function setStock(inventoryUrl: string, sku: string, available: number): Promise<void> {
  const res = await call('PUT', `${inventoryUrl}/stock/${encodeURIComponent(sku)}`, { available })
  if (res.status >= 300)
    throw new Error(`PUT /stock/${sku} answered ${res.status}: ${JSON.stringify(res.body)}`)
}

/** GET /stock/:sku -> `{ available, reserved }`. */
export async function getStock(
  inventoryUrl: string,
  sku: string,
): Promise<{ available: number; reserved: number }> {
  const res = await call('GET', `${inventoryUrl}/stock/${encodeURIComponent(sku)}`)
  if (res.status !== 200)
    throw new Error(`GET /stock/${sku} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as { available: number; reserved: number }
}

/** Runs `tasks` with at most `limit` in flight; results in input order. */
export async function inBatches<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length)
  let next = 0
  let failed = false
  // After one task fails no new ones start, so a failing test does not keep loading the fleet.
  const worker = async (): Promise<void> => {
    while (next < tasks.length && !failed) {
      const i = next++
      try {
        results[i] = await tasks[i]!()
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results
}
