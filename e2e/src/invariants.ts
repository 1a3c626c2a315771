import type { Fleet } from './fleet.js'
import { expectedFacts } from './chain.js'
import type { Ledger } from './ledger.js'
import { SERVICES, type ServiceName } from './run.js'
import { payments } from './payments.js'
import { eventually } from './wait.js'

/** Options of `checkInvariants`. */
export interface InvariantOptions {
  /**
   * Accept a message id published more than once (at-least-once delivery after a kill -9 between
   * the broker's confirm and the relay's commit). Such republishes are counted, not failed.
   */
  allowRepublish?: boolean
  /** How long the fleet may take to settle (every saga complete, every outbox drained). */
  settleMs?: number
}

/** What the checker found; `violations` must be empty. */
export interface InvariantReport {
  violations: string[]
  orders: number
  confirmed: number
  cancelled: number
  published: number
  republished: number
}

interface OutboxRow {
  service: ServiceName
  id: string
  routing_key: string
  order_id: string | null
  published: boolean
  parked: boolean
}

interface Snapshot {
  orders: { id: string; status: string; total_amount: string; failed_step: string | null }[]
  lines: { order_id: string; sku: string; quantity: number }[]
  outbox: OutboxRow[]
  stock: { sku: string; available: number; reserved: number }[]
  reservations: { order_id: string; line_no: number; sku: string; quantity: number; status: string }[]
  shipments: { order_id: string; n: string }[]
  payments: Awaited<ReturnType<typeof payments>>
}

async function snapshot(fleet: Fleet): Promise<Snapshot> {
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
function incomplete(s: Snapshot): string[] {
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

/**
 * Waits until the fleet settled (every saga complete, no pending outbox row, the tap saw every
 * published row), then checks the invariants of issue 5 across the four databases and the tap:
 * - every order placed exists and is terminal, and no other order exists;
 * - books: captured - refunded = total of confirmed orders; per order one capture at most, at most
 *   one refund and only for a cancelled order; reserved stock = quantities of confirmed orders per
 *   SKU and available + reserved = the stock the test set; one reservation per line of a confirmed
 *   order, none held by a cancelled one; one shipment per confirmed order and none otherwise;
 * - every fact at most once per order in the outboxes;
 * - no pending or parked outbox row;
 * - every published row seen by the tap exactly once (or at least once with `allowRepublish`),
 *   beyond the copies the test published itself; nothing on the exchange that no outbox wrote.
 */
export async function checkInvariants(
  fleet: Fleet,
  ledger: Ledger,
  { allowRepublish = false, settleMs = 60_000 }: InvariantOptions = {},
): Promise<InvariantReport> {
  const tap = fleet.tap
  if (!tap) throw new Error('fleet has no tap')
  let s: Snapshot | undefined
  try {
    s = await eventually(
      'fleet settled (sagas complete, outboxes drained, tap caught up)',
      async () => {
        const snap = await snapshot(fleet)
        const open = incomplete(snap)
        const unpublished = snap.outbox.filter((r) => !r.published && !r.parked)
        const seen = tap.countsById()
        const untapped = snap.outbox.filter((r) => r.published && !seen.has(r.id))
        return open.length || unpublished.length || untapped.length ? false : snap
      },
      { timeoutMs: settleMs, intervalMs: 250 },
    )
  } catch {
    s = await snapshot(fleet) // check what is there; the violations name what did not settle
  }
  return judge(s, ledger, tap.countsById(), allowRepublish)
}

function judge(
  s: Snapshot,
  ledger: Ledger,
  seen: Map<string, number>,
  allowRepublish: boolean,
): InvariantReport {
  const v: string[] = []
  const placed = new Set(ledger.orders.map((o) => o.id))
  const byId = new Map(s.orders.map((o) => [o.id, o]))
  for (const id of placed)
    if (!byId.has(id)) v.push(`order ${id} was placed (201) but is not in the order database`)
  for (const o of s.orders) {
    if (!placed.has(o.id)) v.push(`order ${o.id} exists but was never placed by the test`)
    if (o.status !== 'CONFIRMED' && o.status !== 'CANCELLED')
      v.push(`order ${o.id} is ${o.status}, not terminal`)
  }
  const confirmed = s.orders.filter((o) => o.status === 'CONFIRMED')
  const confirmedIds = new Set(confirmed.map((o) => o.id))

  // Payment books.
  const confirmedTotal = confirmed.reduce((sum, o) => sum + BigInt(o.total_amount), 0n)
  const capturedTotal = s.payments.captures.reduce((sum, c) => sum + BigInt(c.amount), 0n)
  const refundedTotal = s.payments.refunds.reduce((sum, r) => sum + BigInt(r.amount), 0n)
  if (capturedTotal - refundedTotal !== confirmedTotal) {
    v.push(
      `books: captured ${capturedTotal} - refunded ${refundedTotal} != confirmed total ${confirmedTotal}`,
    )
  }
  const count = <T>(rows: T[], key: (r: T) => string): Map<string, number> => {
    const m = new Map<string, number>()
    for (const r of rows) m.set(key(r), (m.get(key(r)) ?? 0) + 1)
    return m
  }
  const captures = count(s.payments.captures, (c) => c.order_id)
  const refunds = count(s.payments.refunds, (r) => r.order_id)
  for (const o of s.orders) {
    const c = captures.get(o.id) ?? 0
    const r = refunds.get(o.id) ?? 0
    if (c > 1) v.push(`order ${o.id}: ${c} captures`)
    if (r > 1) v.push(`order ${o.id}: ${r} refunds`)
    if (o.status === 'CONFIRMED' && (c !== 1 || r !== 0))
      v.push(`confirmed order ${o.id}: ${c} captures, ${r} refunds`)
    if (o.status === 'CANCELLED' && c !== r) v.push(`cancelled order ${o.id}: ${c} captures but ${r} refunds`)
  }

  // Stock books.
  const linesOf = new Map<string, { sku: string; quantity: number }[]>()
  for (const l of s.lines) linesOf.set(l.order_id, [...(linesOf.get(l.order_id) ?? []), l])
  const wantReserved = new Map<string, number>()
  for (const o of confirmed) {
    for (const l of linesOf.get(o.id) ?? [])
      wantReserved.set(l.sku, (wantReserved.get(l.sku) ?? 0) + l.quantity)
  }
  for (const row of s.stock) {
    const initial = ledger.stock.get(row.sku)
    if (initial === undefined) v.push(`stock ${row.sku} exists but the test never set it`)
    else if (row.available + row.reserved !== initial) {
      v.push(
        `stock ${row.sku}: available ${row.available} + reserved ${row.reserved} != ${initial} set by the test`,
      )
    }
    const want = wantReserved.get(row.sku) ?? 0
    if (row.reserved !== want)
      v.push(`stock ${row.sku}: reserved ${row.reserved}, confirmed orders hold ${want}`)
  }
  const held = s.reservations.filter((r) => r.status === 'RESERVED')
  const heldPerOrder = count(held, (r) => r.order_id)
  for (const o of s.orders) {
    const h = heldPerOrder.get(o.id) ?? 0
    const lines = linesOf.get(o.id)?.length ?? 0
    if (o.status === 'CONFIRMED' && h !== lines)
      v.push(`confirmed order ${o.id}: ${h} reservations for ${lines} lines`)
    if (o.status === 'CANCELLED' && h !== 0) v.push(`cancelled order ${o.id} still holds ${h} reservations`)
  }

  // Shipments.
  const shipments = new Map(s.shipments.map((r) => [r.order_id, Number(r.n)]))
  for (const o of s.orders) {
    const n = shipments.get(o.id) ?? 0
    if (o.status === 'CONFIRMED' && n !== 1) v.push(`confirmed order ${o.id}: ${n} shipments`)
    if (o.status === 'CANCELLED' && n !== 0) v.push(`cancelled order ${o.id}: ${n} shipments`)
  }
  for (const [orderId] of shipments) if (!byId.has(orderId)) v.push(`shipment for unknown order ${orderId}`)

  // Facts: each at most once per order; every saga complete.
  for (const [key, n] of count(
    s.outbox.filter((r) => r.order_id),
    (r) => `${r.order_id} ${r.routing_key}`,
  )) {
    if (n > 1) v.push(`fact ${key} written ${n} times`)
  }
  for (const id of incomplete(s)) {
    const o = byId.get(id)
    if (o && o.status !== 'PENDING') v.push(`order ${id} (${o.status}) misses facts of its saga`)
  }

  // Outboxes drained; no message lost or doubled.
  for (const r of s.outbox.filter((r) => !r.published)) {
    v.push(`${r.service} outbox row ${r.id} (${r.routing_key}) is ${r.parked ? 'parked' : 'pending'}`)
  }
  const rowIds = new Set(s.outbox.map((r) => r.id))
  let republished = 0
  for (const r of s.outbox.filter((r) => r.published)) {
    const n = (seen.get(r.id) ?? 0) - (ledger.injected.get(r.id) ?? 0)
    if (n < 1)
      v.push(`${r.service} row ${r.id} (${r.routing_key}) is marked published but the tap never saw it`)
    if (n > 1) {
      republished += n - 1
      if (!allowRepublish) v.push(`${r.service} row ${r.id} (${r.routing_key}) was published ${n} times`)
    }
  }
  for (const [id] of seen) {
    if (!rowIds.has(id) && !ledger.injected.has(id))
      v.push(`the tap saw message ${id}, which no outbox wrote`)
  }

  return {
    violations: v,
    orders: s.orders.length,
    confirmed: confirmed.length,
    cancelled: s.orders.length - confirmedIds.size,
    published: s.outbox.filter((r) => r.published).length,
    republished,
  }
}
