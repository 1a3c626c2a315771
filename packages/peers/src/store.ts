/**
 * The business state every peer keeps in its own PostgreSQL database (orders, payments, stock,
 * reservations, shipments) and the saga's effects on it. Each effect is idempotent by the order id
 * (a unique key per effect and a guarded state change), so a step that a peer runs again after a
 * crash or a retry changes nothing twice: the peers promise at-least-once steps (DBOS, Restate) or
 * run the effect in the transaction that completes the job (pg-boss); either way the invariants in
 * invariants.ts must hold.
 */
import pg from 'pg'
import { declineReason, INITIAL_STOCK, orderTotal, ships, type Line, type Order } from './rules.js'

/**
 * Runs one statement: pg's `Client.query`, a pool, or pg-boss's transaction `executeSql`. `R` is
 * the shape of a row the caller expects (not checked).
 */
export type Sql = <R = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<{ rows: R[] }>

/** The tables; created once per peer database before its server starts. */
export const SCHEMA = `
CREATE TABLE orders (
  id uuid PRIMARY KEY,
  status text NOT NULL DEFAULT 'PENDING',
  cancellation_reason text,
  total bigint NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX orders_created_at_id_idx ON orders (created_at DESC, id DESC);
CREATE INDEX orders_pending_idx ON orders (created_at DESC) WHERE status = 'PENDING';
CREATE TABLE payments (
  order_id uuid PRIMARY KEY,
  amount bigint NOT NULL,
  status text NOT NULL,
  decline_reason text,
  refunded_at timestamptz
);
CREATE TABLE stock (sku text PRIMARY KEY, available integer NOT NULL CHECK (available >= 0), initial integer NOT NULL);
CREATE TABLE reservations (order_id uuid PRIMARY KEY, status text NOT NULL, lines jsonb NOT NULL);
CREATE TABLE shipments (order_id uuid PRIMARY KEY, status text NOT NULL, tracking text);
`

/** Creates the tables in `databaseUrl` and stocks the benchmark's skus (rules.ts `INITIAL_STOCK`). */
export async function createSchema(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(SCHEMA)
    for (const [sku, units] of Object.entries(INITIAL_STOCK)) await setStock(clientSql(client), sku, units)
  } finally {
    await client.end()
  }
}

/** Sets a sku's stock to `units`, counted as its initial stock by the invariants. */
export async function setStock(sql: Sql, sku: string, units: number): Promise<void> {
  await sql(
    `INSERT INTO stock (sku, available, initial) VALUES ($1, $2, $2)
     ON CONFLICT (sku) DO UPDATE SET available = $2, initial = $2`,
    [sku, units],
  )
}

/** Records a new PENDING order (its total from its lines). */
export async function insertOrder(sql: Sql, order: Order): Promise<void> {
  const { id, ...body } = order
  await sql('INSERT INTO orders (id, total, body) VALUES ($1, $2, $3)', [id, orderTotal(order.items), body])
}

/** Charges the order once: `captured`, or the decline reason. A second call answers the first's outcome. */
export async function charge(sql: Sql, order: Order): Promise<{ captured: boolean; reason?: string }> {
  const amount = orderTotal(order.items)
  const reason = declineReason(order.paymentMethod, amount)
  await sql(
    `INSERT INTO payments (order_id, amount, status, decline_reason) VALUES ($1, $2, $3, $4)
     ON CONFLICT (order_id) DO NOTHING`,
    [order.id, amount, reason ? 'declined' : 'captured', reason ?? null],
  )
  const { rows } = await sql<{ status: string; decline_reason: string }>(
    'SELECT status, decline_reason FROM payments WHERE order_id = $1',
    [order.id],
  )
  return rows[0]!.status === 'declined'
    ? { captured: false, reason: rows[0]!.decline_reason }
    : { captured: true }
}

/** Refunds the order's capture once (a no-op when refunded already or never captured). */
export async function refund(sql: Sql, orderId: string): Promise<void> {
  await sql(
    `UPDATE payments SET status = 'refunded', refunded_at = clock_timestamp() WHERE order_id = $1 AND status = 'captured'`,
    [orderId],
  )
}

/**
 * Reserves every line or none, once: `reserved`, or the refusal reason. Must run inside a
 * transaction (it locks the skus' rows, in sku order so two orders never deadlock); a second call
 * answers the first's outcome.
 */
export async function reserve(
  sql: Sql,
  orderId: string,
  items: readonly Line[],
): Promise<{ reserved: boolean; reason?: string }> {
  const claimed = await sql(
    `INSERT INTO reservations (order_id, status, lines) VALUES ($1, 'pending', $2) ON CONFLICT (order_id) DO NOTHING RETURNING order_id`,
    [orderId, JSON.stringify(items)],
  )
  if (claimed.rows.length === 0) {
    const { rows } = await sql<{ status: string }>('SELECT status FROM reservations WHERE order_id = $1', [
      orderId,
    ])
    return rows[0]!.status === 'reserved' ? { reserved: true } : { reserved: false, reason: rows[0]!.status }
  }
  const want = new Map<string, number>()
  for (const line of items) want.set(line.sku, (want.get(line.sku) ?? 0) + line.quantity)
  const skus = [...want.keys()].sort()
  const { rows } = await sql<{ sku: string; available: number }>(
    'SELECT sku, available FROM stock WHERE sku = ANY($1) ORDER BY sku FOR UPDATE',
    [skus],
  )
  const available = new Map(rows.map((r) => [r.sku, r.available]))
  const refusal = skus.some((s) => !available.has(s))
    ? 'unknown_sku'
    : skus.some((s) => available.get(s)! < want.get(s)!)
      ? 'out_of_stock'
      : undefined
  if (!refusal) {
    await sql(
      `UPDATE stock SET available = available - w.quantity
       FROM unnest($1::text[], $2::int[]) AS w(sku, quantity) WHERE stock.sku = w.sku`,
      [skus, skus.map((s) => want.get(s))],
    )
  }
  await sql('UPDATE reservations SET status = $2 WHERE order_id = $1', [orderId, refusal ?? 'reserved'])
  return refusal ? { reserved: false, reason: refusal } : { reserved: true }
}

/** Gives a reservation's units back once (a no-op when released already or never reserved). Inside a transaction. */
export async function release(sql: Sql, orderId: string): Promise<void> {
  const { rows } = await sql<{ lines: Line[] }>(
    `UPDATE reservations SET status = 'released' WHERE order_id = $1 AND status = 'reserved' RETURNING lines`,
    [orderId],
  )
  if (rows.length === 0) return
  const lines = rows[0]!.lines
  await sql(
    `UPDATE stock SET available = available + w.quantity
     FROM (SELECT sku, sum(quantity)::int AS quantity FROM unnest($1::text[], $2::int[]) AS l(sku, quantity) GROUP BY sku) AS w
     WHERE stock.sku = w.sku`,
    [lines.map((l) => l.sku), lines.map((l) => l.quantity)],
  )
}

/** Books the shipment once: `created`, or `unsupported_country`. A second call answers the first's outcome. */
export async function ship(sql: Sql, order: Order): Promise<{ shipped: boolean; reason?: string }> {
  const ok = ships(order.shippingAddress.country)
  await sql(
    `INSERT INTO shipments (order_id, status, tracking) VALUES ($1, $2, $3) ON CONFLICT (order_id) DO NOTHING`,
    [
      order.id,
      ok ? 'created' : 'unsupported_country',
      ok ? `SP${order.id.replaceAll('-', '').slice(0, 12).toUpperCase()}` : null,
    ],
  )
  const { rows } = await sql<{ status: string }>('SELECT status FROM shipments WHERE order_id = $1', [
    order.id,
  ])
  return rows[0]!.status === 'created' ? { shipped: true } : { shipped: false, reason: rows[0]!.status }
}

/** Moves a PENDING order to CONFIRMED, or CANCELLED with `reason`; a final order never changes again. */
export async function finish(sql: Sql, orderId: string, reason?: string): Promise<void> {
  await sql(
    `UPDATE orders SET status = $2, cancellation_reason = $3, updated_at = clock_timestamp() WHERE id = $1 AND status = 'PENDING'`,
    [orderId, reason ? 'CANCELLED' : 'CONFIRMED', reason ?? null],
  )
}

/** A pg client or pool as `Sql`. */
export const clientSql =
  (client: Pick<pg.Pool, 'query'>): Sql =>
  async <R>(text: string, values?: unknown[]) => ({ rows: (await client.query(text, values)).rows as R[] })

/** Runs `work` in one transaction on a client of `pool`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (sql: Sql) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const result = await work(clientSql(client))
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}
