import { CANCELLED_ORDER_TABLE } from '@saga/cancellations'
import { expectedFacts } from './chain.js'
import type { Fleet } from './fleet.js'
import { payments } from './payments.js'
import { SERVICES, type ServiceName } from './run.js'

/** The four databases as the invariants read them, taken in one pass after the fleet settled. */
export interface OutboxRow {
  service: ServiceName
  id: string
  routing_key: string
  order_id: string | null
  published: boolean
  parked: boolean
}

export interface Snapshot {
  orders: {
    id: string
    status: string
    total_amount: string
    failed_step: string | null
    cancellation_reason: string | null
  }[]
  lines: { order_id: string; sku: string; quantity: number }[]
  outbox: OutboxRow[]
  stock: { sku: string; available: number; reserved: number }[]
  reservations: { order_id: string; line_no: number; sku: string; quantity: number; status: string }[]
  /** Shipments per order and status (CREATED: live; CANCELLED: its order was cancelled). */
  shipments: { order_id: string; status: string; n: string }[]
  payments: Awaited<ReturnType<typeof payments>>
  /** Per service that undoes effects, the orders it has recorded as cancelled (it handled OrderCancelled). */
  cancelledAt: Record<UndoingService, Set<string>>
}

/** The services that react to OrderCancelled by undoing their own effect. */
export const UNDOING_SERVICES = ['payment', 'inventory', 'shipment'] as const
export type UndoingService = (typeof UNDOING_SERVICES)[number]

/** Reads the snapshot from the fleet's four databases (`fleet.dbs`). */
export async function snapshot(fleet: Pick<Fleet, 'dbs'>): Promise<Snapshot> {
  const dbs = fleet.dbs
  if (!dbs) throw new Error('fleet has no databases')
  const outbox: OutboxRow[] = []
  for (const service of SERVICES) {
    const rows = await dbs.query<Omit<OutboxRow, 'service'>>(
      service,
      `SELECT id, routing_key, payload->>'orderId' AS order_id, published_at IS NOT NULL AS published,
              failed_at IS NOT NULL AS parked FROM outbox_message`,
    )
    outbox.push(...rows.map((r) => ({ ...r, service })))
  }
  return {
    orders: await dbs.query(
      'order',
      `SELECT id, status, total_amount::text, failed_step, cancellation_reason FROM orders`,
    ),
    lines: await dbs.query('order', `SELECT order_id, sku, quantity FROM order_lines`),
    outbox,
    stock: await dbs.query('inventory', `SELECT sku, available, reserved FROM stock`),
    reservations: await dbs.query(
      'inventory',
      `SELECT order_id, line_no, sku, quantity, status FROM reservation`,
    ),
    shipments: await dbs.query(
      'shipment',
      `SELECT order_id, status::text, count(*)::text AS n FROM shipment GROUP BY order_id, status`,
    ),
    payments: await payments(dbs),
    cancelledAt: Object.fromEntries(
      await Promise.all(
        UNDOING_SERVICES.map(async (service) => {
          const rows = await dbs.query<{ order_id: string }>(
            service,
            `SELECT order_id FROM ${CANCELLED_ORDER_TABLE}`,
          )
          return [service, new Set(rows.map((r) => r.order_id))] as const
        }),
      ),
    ) as Record<UndoingService, Set<string>>,
  }
}

/**
 * Whether a cancelled order is not settled yet: a service that undoes effects has not handled its
 * OrderCancelled, or a capture is not refunded, a reservation still held, a shipment still live. Once
 * all three recorded the cancel, a step fact still on its way does nothing (each service's protocol),
 * so the books of the order cannot change again.
 */
function cancelUnsettled(s: Snapshot, orderId: string): boolean {
  if (UNDOING_SERVICES.some((service) => !s.cancelledAt[service].has(orderId))) return true
  const captured = s.payments.captures.filter((c) => c.order_id === orderId).length
  const refunded = s.payments.refunds.filter((r) => r.order_id === orderId).length
  if (captured !== refunded) return true
  if (s.reservations.some((r) => r.order_id === orderId && r.status === 'RESERVED')) return true
  return s.shipments.some((r) => r.order_id === orderId && r.status === 'CREATED')
}

/**
 * Orders whose saga is not complete yet: not terminal, a fact (compensation included) missing, or,
 * when cancelled, not yet undone everywhere (`cancelUnsettled`).
 */
export function incomplete(s: Snapshot): string[] {
  const facts = new Map<string, Set<string>>()
  for (const r of s.outbox) {
    if (!r.order_id) continue
    const set = facts.get(r.order_id) ?? new Set<string>()
    set.add(r.routing_key)
    facts.set(r.order_id, set)
  }
  return s.orders
    .filter((o) => {
      if (o.status === 'PENDING') return true
      const seen = facts.get(o.id) ?? new Set()
      if (o.status === 'CANCELLED' && cancelUnsettled(s, o.id)) return true
      return expectedFacts(o.status, o.failed_step, o.cancellation_reason).some((f) => !seen.has(f))
    })
    .map((o) => o.id)
}
