import pg from 'pg'

/** The verdict of one database's check: `ok` when `problems` is empty; counts by final outcome. */
export interface Verdict {
  ok: boolean
  /** One line per broken rule, with how many orders break it (empty when all hold). */
  problems: string[]
  /** Orders by `status` or `CANCELLED reason`. */
  outcomes: Record<string, number>
}

/**
 * Every order's effects, as one row per order, against what its final state requires:
 * CONFIRMED = captured, reserved, shipped; CANCELLED card_declined (or another decline) = declined,
 * nothing reserved or shipped; out_of_stock = refunded, reservation refused, nothing shipped;
 * unsupported_country = refunded, reservation released, shipment refused.
 */
const EFFECTS = `
SELECT o.id, o.status, o.cancellation_reason AS reason, o.total,
       p.status AS payment, p.amount, r.status AS reservation, s.status AS shipment
FROM orders o
LEFT JOIN payments p ON p.order_id = o.id
LEFT JOIN reservations r ON r.order_id = o.id
LEFT JOIN shipments s ON s.order_id = o.id`

interface EffectRow {
  id: string
  status: string
  reason: string | null
  total: string
  payment: string | null
  amount: string | null
  reservation: string | null
  shipment: string | null
}

/** What an order's effects must be, as `payment/reservation/shipment` (`-` = none), by its final state. */
function expected(row: EffectRow): string | undefined {
  if (row.status === 'CONFIRMED') return 'captured/reserved/created'
  if (row.status !== 'CANCELLED') return undefined
  if (row.reason === 'out_of_stock' || row.reason === 'unknown_sku') return `refunded/${row.reason}/-`
  if (row.reason === 'unsupported_country') return 'refunded/released/unsupported_country'
  return 'declined/-/-'
}

/**
 * Checks one peer's database after a run: every order final (none PENDING), each order's effects
 * exactly those its final state requires (so none missing, none left over: a refund without a
 * charge or a second reservation shows here), money balanced (captured and not refunded = the
 * totals of the CONFIRMED orders; payments match their order's total) and stock balanced (each
 * sku's initial stock less its units in `reserved` reservations = its available stock). Throws
 * only when the database cannot be read.
 */
export async function checkInvariants(databaseUrl: string): Promise<Verdict> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const problems = new Map<string, number>()
    const note = (problem: string) => problems.set(problem, (problems.get(problem) ?? 0) + 1)
    const outcomes: Record<string, number> = {}
    const { rows } = await client.query<EffectRow>(EFFECTS)
    let kept = 0n
    let confirmed = 0n
    for (const row of rows) {
      const key = row.status === 'CANCELLED' ? `CANCELLED ${row.reason}` : row.status
      outcomes[key] = (outcomes[key] ?? 0) + 1
      const want = expected(row)
      const got = `${row.payment ?? '-'}/${row.reservation ?? '-'}/${row.shipment ?? '-'}`
      if (!want) note('order not final (PENDING)')
      else if (got !== want) note(`${key}: effects ${got}, expected ${want}`)
      if (row.amount !== null && row.amount !== row.total) note('payment amount differs from the order total')
      if (row.payment === 'captured') kept += BigInt(row.amount ?? 0)
      if (row.status === 'CONFIRMED') confirmed += BigInt(row.total)
    }
    if (kept !== confirmed) note(`money: ${kept} captured and kept, ${confirmed} in CONFIRMED orders`)
    const orphans = await client.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM payments WHERE order_id NOT IN (SELECT id FROM orders))
            + (SELECT count(*) FROM reservations WHERE order_id NOT IN (SELECT id FROM orders))
            + (SELECT count(*) FROM shipments WHERE order_id NOT IN (SELECT id FROM orders)) AS n`,
    )
    if (Number(orphans.rows[0]!.n) > 0) note(`${orphans.rows[0]!.n} effects of unknown orders`)
    const stock = await client.query<{ sku: string; available: number; expected: number }>(
      `SELECT s.sku, s.available, s.initial - coalesce((
         SELECT sum((l->>'quantity')::int) FROM reservations r, jsonb_array_elements(r.lines) l
         WHERE r.status = 'reserved' AND l->>'sku' = s.sku), 0)::int AS expected
       FROM stock s`,
    )
    for (const s of stock.rows) {
      if (s.available !== s.expected) note(`stock ${s.sku}: ${s.available} available, ${s.expected} expected`)
    }
    const list = [...problems].map(([problem, n]) => (n > 1 ? `${problem} (${n} orders)` : problem))
    return { ok: list.length === 0, problems: list, outcomes }
  } finally {
    await client.end()
  }
}
