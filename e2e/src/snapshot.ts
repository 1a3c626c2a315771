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
  orders: { id: string; status: string; total_amount: string; failed_step: string | null }[]
  lines: { order_id: string; sku: string; quantity: number }[]
  outbox: OutboxRow[]
  stock: { sku: string; available: number; reserved: number }[]
  reservations: { order_id: string; line_no: number; sku: string; quantity: number; status: string }[]
  shipments: { order_id: string; n: string }[]
  payments: Awaited<ReturnType<typeof payments>>
}

export async function snapshot(fleet: Fleet): Promise<Snapshot> {
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
    orders: await dbs.query('order', `SELECT id, status, total_amount::text, failed_step FROM orders`),
    lines: await dbs.query('order', `SELECT order_id, sku, quantity FROM order_lines`),
    outbox,
    stock: await dbs.query('inventory', `SELECT sku, available, reserved FROM stock`),
    reservations: await dbs.query(
      'inventory',
      `SELECT order_id, line_no, sku, quantity, status FROM reservation`,
    ),
    shipments: await dbs.query(
      'shipment',
      `SELECT order_id, count(*)::text AS n FROM shipment GROUP BY order_id`,
    ),
    payments: await payments(dbs),
  }
}

/** Orders whose saga is not complete yet: not terminal, or a fact (compensation included) missing. */
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
      return expectedFacts(o.status, o.failed_step).some((f) => !seen.has(f))
    })
    .map((o) => o.id)
}
