import type { Ledger } from './ledger.js'
import { incomplete, UNDOING_SERVICES, type Snapshot } from './snapshot.js'

/** What the checker found; `violations` must be empty. */
export interface InvariantReport {
  violations: string[]
  orders: number
  confirmed: number
  cancelled: number
  published: number
  republished: number
}

/** What every check reads: the snapshot, the test's ledger, and the tap's count per message id. */
export interface CheckInput {
  s: Snapshot
  ledger: Ledger
  seen: Map<string, number>
  allowRepublish: boolean
}

/** One named invariant: the violations it finds, each a sentence naming the order, row or sku. */
type Check = (input: CheckInput) => string[]

const countBy = <T>(rows: T[], key: (r: T) => string): Map<string, number> => {
  const m = new Map<string, number>()
  for (const r of rows) m.set(key(r), (m.get(key(r)) ?? 0) + 1)
  return m
}

const confirmedOf = (s: Snapshot) => s.orders.filter((o) => o.status === 'CONFIRMED')

const linesByOrder = (s: Snapshot) => {
  const linesOf = new Map<string, { sku: string; quantity: number }[]>()
  for (const l of s.lines) linesOf.set(l.order_id, [...(linesOf.get(l.order_id) ?? []), l])
  return linesOf
}

/** Every order placed exists and is terminal, and no other order exists. */
const ordersPlacedAndTerminal: Check = ({ s, ledger }) => {
  const v: string[] = []
  const placed = new Set(ledger.orders.map((o) => o.id))
  const byId = new Set(s.orders.map((o) => o.id))
  for (const id of placed)
    if (!byId.has(id)) v.push(`order ${id} was placed (201) but is not in the order database`)
  for (const o of s.orders) {
    if (!placed.has(o.id)) v.push(`order ${o.id} exists but was never placed by the test`)
    if (o.status !== 'CONFIRMED' && o.status !== 'CANCELLED')
      v.push(`order ${o.id} is ${o.status}, not terminal`)
  }
  return v
}

/** Captured - refunded = total of confirmed orders; one capture at most, refunded only when cancelled. */
const paymentBooks: Check = ({ s }) => {
  const v: string[] = []
  const confirmedTotal = confirmedOf(s).reduce((sum, o) => sum + BigInt(o.total_amount), 0n)
  const capturedTotal = s.payments.captures.reduce((sum, c) => sum + BigInt(c.amount), 0n)
  const refundedTotal = s.payments.refunds.reduce((sum, r) => sum + BigInt(r.amount), 0n)
  if (capturedTotal - refundedTotal !== confirmedTotal) {
    v.push(
      `books: captured ${capturedTotal} - refunded ${refundedTotal} != confirmed total ${confirmedTotal}`,
    )
  }
  const captures = countBy(s.payments.captures, (c) => c.order_id)
  const refunds = countBy(s.payments.refunds, (r) => r.order_id)
  for (const o of s.orders) {
    const c = captures.get(o.id) ?? 0
    const r = refunds.get(o.id) ?? 0
    if (c > 1) v.push(`order ${o.id}: ${c} captures`)
    if (r > 1) v.push(`order ${o.id}: ${r} refunds`)
    if (o.status === 'CONFIRMED' && (c !== 1 || r !== 0))
      v.push(`confirmed order ${o.id}: ${c} captures, ${r} refunds`)
    if (o.status === 'CANCELLED' && c !== r) v.push(`cancelled order ${o.id}: ${c} captures but ${r} refunds`)
  }
  return v
}

/** Reserved stock = lines of confirmed orders, available + reserved = what the test set, per sku. */
const stockBooks: Check = ({ s, ledger }) => {
  const v: string[] = []
  const linesOf = linesByOrder(s)
  const wantReserved = new Map<string, number>()
  for (const o of confirmedOf(s)) {
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
  return v
}

/** One held reservation per line of a confirmed order, none held by a cancelled one. */
const reservations: Check = ({ s }) => {
  const v: string[] = []
  const linesOf = linesByOrder(s)
  const heldPerOrder = countBy(
    s.reservations.filter((r) => r.status === 'RESERVED'),
    (r) => r.order_id,
  )
  for (const o of s.orders) {
    const h = heldPerOrder.get(o.id) ?? 0
    const lines = linesOf.get(o.id)?.length ?? 0
    if (o.status === 'CONFIRMED' && h !== lines)
      v.push(`confirmed order ${o.id}: ${h} reservations for ${lines} lines`)
    if (o.status === 'CANCELLED' && h !== 0) v.push(`cancelled order ${o.id} still holds ${h} reservations`)
  }
  return v
}

/**
 * One live (CREATED) shipment per confirmed order and no cancelled one; no live shipment for a
 * cancelled order (a CANCELLED one is how a shipment booked before the cancel ends); none for an
 * unknown order; at most one shipment per order in any status.
 */
const shipments: Check = ({ s }) => {
  const v: string[] = []
  const byId = new Set(s.orders.map((o) => o.id))
  const count = (orderId: string, status?: string) =>
    s.shipments
      .filter((r) => r.order_id === orderId && (status === undefined || r.status === status))
      .reduce((n, r) => n + Number(r.n), 0)
  for (const o of s.orders) {
    const live = count(o.id, 'CREATED')
    const all = count(o.id)
    if (o.status === 'CONFIRMED' && (live !== 1 || all !== 1))
      v.push(`confirmed order ${o.id}: ${live} live shipments of ${all}`)
    if (o.status === 'CANCELLED' && live !== 0) v.push(`cancelled order ${o.id}: ${live} live shipments`)
    if (all > 1) v.push(`order ${o.id}: ${all} shipments`)
  }
  for (const r of s.shipments) if (!byId.has(r.order_id)) v.push(`shipment for unknown order ${r.order_id}`)
  return v
}

/** Every cancelled order's cancellation is recorded by payment, inventory and shipment (each undid its part). */
const cancellationsRecorded: Check = ({ s }) =>
  s.orders
    .filter((o) => o.status === 'CANCELLED')
    .flatMap((o) =>
      UNDOING_SERVICES.filter((service) => !s.cancelledAt[service].has(o.id)).map(
        (service) => `cancelled order ${o.id}: ${service} never handled its OrderCancelled`,
      ),
    )

/** Each fact at most once per order in the outboxes, and every terminal order's saga complete. */
const factsOnceAndComplete: Check = ({ s }) => {
  const v: string[] = []
  const keyed = s.outbox.filter((r) => r.order_id)
  for (const [key, n] of countBy(keyed, (r) => `${r.order_id} ${r.routing_key}`)) {
    if (n > 1) v.push(`fact ${key} written ${n} times`)
  }
  const byId = new Map(s.orders.map((o) => [o.id, o]))
  for (const id of incomplete(s)) {
    const o = byId.get(id)
    if (o && o.status !== 'PENDING') v.push(`order ${id} (${o.status}) misses facts of its saga`)
  }
  return v
}

/** No pending or parked outbox row. */
const outboxesDrained: Check = ({ s }) =>
  s.outbox
    .filter((r) => !r.published)
    .map((r) => `${r.service} outbox row ${r.id} (${r.routing_key}) is ${r.parked ? 'parked' : 'pending'}`)

/** Copies of each published row the tap saw, beyond those the test published itself. */
const tappedCopies = ({ s, ledger, seen }: CheckInput) =>
  s.outbox
    .filter((r) => r.published)
    .map((r) => ({ row: r, n: (seen.get(r.id) ?? 0) - (ledger.injected.get(r.id) ?? 0) }))

/** Every published row seen by the tap once (at least once with `allowRepublish`); nothing else seen. */
const tapSawEachOnce: Check = (input) => {
  const { s, ledger, seen, allowRepublish } = input
  const v: string[] = []
  for (const { row: r, n } of tappedCopies(input)) {
    if (n < 1)
      v.push(`${r.service} row ${r.id} (${r.routing_key}) is marked published but the tap never saw it`)
    if (n > 1 && !allowRepublish)
      v.push(`${r.service} row ${r.id} (${r.routing_key}) was published ${n} times`)
  }
  const rowIds = new Set(s.outbox.map((r) => r.id))
  for (const [id] of seen) {
    if (!rowIds.has(id) && !ledger.injected.has(id))
      v.push(`the tap saw message ${id}, which no outbox wrote`)
  }
  return v
}

/** The invariants, by name, in the order their violations are reported. */
export const checks: Record<string, Check> = {
  ordersPlacedAndTerminal,
  paymentBooks,
  stockBooks,
  reservations,
  shipments,
  cancellationsRecorded,
  factsOnceAndComplete,
  outboxesDrained,
  tapSawEachOnce,
}

/** Runs every check on the snapshot and counts what the report shows. */
export function judge(
  s: Snapshot,
  ledger: Ledger,
  seen: Map<string, number>,
  allowRepublish: boolean,
): InvariantReport {
  const input = { s, ledger, seen, allowRepublish }
  const confirmed = confirmedOf(s).length
  return {
    violations: Object.values(checks).flatMap((check) => check(input)),
    orders: s.orders.length,
    confirmed,
    cancelled: s.orders.length - confirmed,
    published: s.outbox.filter((r) => r.published).length,
    republished: tappedCopies(input).reduce((sum, { n }) => sum + Math.max(0, n - 1), 0),
  }
}
