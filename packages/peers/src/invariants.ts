import pg from 'pg'

/** The verdict of one run's check: `ok` when `problems` is empty; counts by final outcome. */
export interface Verdict {
  ok: boolean
  /** One line per broken rule, with how many orders break it (empty when all hold). */
  problems: string[]
  /** Orders by `status` or `CANCELLED reason`. */
  outcomes: Record<string, number>
}

/**
 * One order and its effects as every contestant records them, in one vocabulary: `payment`
 * captured, declined or refunded; `reservation` reserved, released, or the refusal's reason;
 * `shipment` created or the refusal's reason; null = none. `effects` counts the rows behind them
 * (payments, refunds, reservations, shipments), so a doubled effect shows even where a state column
 * alone would not.
 */
export interface OrderEffects {
  status: string
  reason: string | null
  total: bigint
  payment: string | null
  amount: bigint | null
  reservation: string | null
  shipment: string | null
  /** Rows per kind of effect, e.g. `{ payment: 1, refund: 1 }`; a kind counted twice is a double effect. */
  effects: Record<string, number>
}

/** A sku's stock at the end, and what it should be: its initial units less those in `reserved` reservations. */
export interface StockBalance {
  sku: string
  available: number
  expected: number
}

/** What an order's effects must be, as `payment/reservation/shipment` (`-` = none), by its final state. */
function expected(order: OrderEffects): string | undefined {
  if (order.status === 'CONFIRMED') return 'captured/reserved/created'
  if (order.status !== 'CANCELLED') return undefined
  if (order.reason === 'out_of_stock' || order.reason === 'unknown_sku') return `refunded/${order.reason}/-`
  if (order.reason === 'unsupported_country') return 'refunded/released/unsupported_country'
  return 'declined/-/-'
}

/**
 * The invariants over one run, the same for every contestant: every order final (none PENDING);
 * each order's effects exactly those its final state requires, each at most once (none missing,
 * none left over, none doubled); money balanced (captured and not refunded = the totals of the
 * CONFIRMED orders, each payment of its order's total); stock balanced (per sku, initial less
 * reserved units = available).
 */
export function judge(orders: readonly OrderEffects[], stock: readonly StockBalance[]): Verdict {
  const problems = new Map<string, number>()
  const note = (problem: string) => problems.set(problem, (problems.get(problem) ?? 0) + 1)
  const outcomes: Record<string, number> = {}
  let kept = 0n
  let confirmed = 0n
  for (const order of orders) {
    const key = order.status === 'CANCELLED' ? `CANCELLED ${order.reason}` : order.status
    outcomes[key] = (outcomes[key] ?? 0) + 1
    const want = expected(order)
    const got = `${order.payment ?? '-'}/${order.reservation ?? '-'}/${order.shipment ?? '-'}`
    if (!want) note('order not final (PENDING)')
    else if (got !== want) note(`${key}: effects ${got}, expected ${want}`)
    for (const [kind, n] of Object.entries(order.effects)) if (n > 1) note(`${kind} made more than once`)
    if (order.amount !== null && order.amount !== order.total)
      note('payment amount differs from the order total')
    if (order.payment === 'captured') kept += order.amount ?? 0n
    if (order.status === 'CONFIRMED') confirmed += order.total
  }
  if (kept !== confirmed) note(`money: ${kept} captured and kept, ${confirmed} in CONFIRMED orders`)
  for (const s of stock) {
    if (s.available !== s.expected) note(`stock ${s.sku}: ${s.available} available, ${s.expected} expected`)
  }
  const list = [...problems].map(([problem, n]) => (n > 1 ? `${problem} (${n} orders)` : problem))
  return { ok: list.length === 0, problems: list, outcomes }
}

/** Runs `read` on a connection to `url`, closed after. */
export async function withClient<T>(url: string, read: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await read(client)
  } finally {
    await client.end()
  }
}

/**
 * Checks a peer's database (store.ts's tables) with `judge`. Its unique keys allow one row per order
 * and effect, so effects found for orders that do not exist are reported as a problem of their own.
 * Throws only when the database cannot be read.
 */
export async function checkInvariants(databaseUrl: string): Promise<Verdict> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{
      status: string
      reason: string | null
      total: string
      payment: string | null
      amount: string | null
      reservation: string | null
      shipment: string | null
    }>(
      `SELECT o.status, o.cancellation_reason AS reason, o.total, p.status AS payment, p.amount,
              r.status AS reservation, s.status AS shipment
       FROM orders o
       LEFT JOIN payments p ON p.order_id = o.id
       LEFT JOIN reservations r ON r.order_id = o.id
       LEFT JOIN shipments s ON s.order_id = o.id`,
    )
    const orders: OrderEffects[] = rows.map((r) => ({
      status: r.status,
      reason: r.reason,
      total: BigInt(r.total),
      payment: r.payment,
      amount: r.amount === null ? null : BigInt(r.amount),
      reservation: r.reservation,
      shipment: r.shipment,
      effects: {},
    }))
    const stock = await client.query<StockBalance>(
      `SELECT s.sku, s.available, s.initial - coalesce((
         SELECT sum((l->>'quantity')::int) FROM reservations r, jsonb_array_elements(r.lines) l
         WHERE r.status = 'reserved' AND l->>'sku' = s.sku), 0)::int AS expected
       FROM stock s`,
    )
    const verdict = judge(orders, stock.rows)
    const orphans = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM payments WHERE order_id NOT IN (SELECT id FROM orders))
            + (SELECT count(*) FROM reservations WHERE order_id NOT IN (SELECT id FROM orders))
            + (SELECT count(*) FROM shipments WHERE order_id NOT IN (SELECT id FROM orders)) AS n`,
    )
    if (Number(orphans.rows[0]!.n) > 0) {
      verdict.problems.push(`${orphans.rows[0]!.n} effects of unknown orders`)
      verdict.ok = false
    }
    return verdict
  })
}
