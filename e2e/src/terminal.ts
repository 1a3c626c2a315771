import type { PlacedOrder } from './ledger.js'
import type { TapQueue } from '@saga/testkit'

const TERMINAL = new Set(['order.confirmed', 'order.cancelled'])

/**
 * Waits until the tap has seen a terminal event (order.confirmed / order.cancelled) for every
 * order, and returns each order's time-to-terminal in ms (tap arrival minus POST sent). Rejects
 * after `timeoutMs` naming how many are still open.
 */
export async function awaitTerminal(
  tap: TapQueue,
  orders: readonly PlacedOrder[],
  timeoutMs: number,
): Promise<number[]> {
  const deadline = Date.now() + timeoutMs
  const times: number[] = []
  for (const order of orders) {
    const left = Math.max(1, deadline - Date.now())
    try {
      const m = await tap.waitFor(
        (m) => m.correlationId === order.id && TERMINAL.has(m.routingKey),
        left,
        `terminal event for ${order.id}`,
      )
      times.push(m.receivedAt - order.sentAt)
    } catch {
      const open = orders.filter(
        (o) => !tap.messages.some((m) => m.correlationId === o.id && TERMINAL.has(m.routingKey)),
      )
      throw new Error(
        `${open.length} of ${orders.length} orders not terminal within ${timeoutMs} ms; e.g. ${open
          .slice(0, 3)
          .map(
            (o) =>
              `${o.id}: [${tap
                .chain(o.id)
                .map((m) => m.routingKey)
                .join(', ')}]`,
          )
          .join('; ')}`,
      )
    }
  }
  return times
}
