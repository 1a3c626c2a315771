/**
 * Seeds an order database with `count` orders, their lines and timelines, in a few set-based
 * statements (seconds for 100,000 orders), for the console benchmark. The mix, by a fixed
 * pseudo-random draw per order (u in 0..999), with creation times spread evenly over the last
 * `spanMs` up to now:
 * - placed in the last ORDER_DEADLINE (10 min): u < 300 PENDING (a slow fleet: a third each waiting
 *   for payment, inventory, shipment, with the timelines that means);
 * - placed before: u < 3 PENDING past its deadline (the scheduler's backlog);
 * - the rest: u < 880 CONFIRMED, else CANCELLED: card_declined (payment), out_of_stock (stock),
 *   unsupported_country (shipment), deadline_exceeded, customer_requested;
 * - ended orders took 20 ms to 2 s (by u) from creation.
 * Timelines hold the facts each outcome implies (3 to 9 rows), lines 1 to 3 per order.
 */
import type pg from 'pg'

/** What `seedOrders` wrote. */
export interface Seeded {
  orders: number
  lines: number
  events: number
}

/** Versioned types of the timeline facts, in chain order, per outcome. */
const TIMELINES = {
  'pending-payment': ['order.created.v1'],
  'pending-inventory': ['order.created.v1', 'payment.processed.v1'],
  'pending-shipment': ['order.created.v1', 'payment.processed.v1', 'stock.reserved.v1'],
  confirmed: [
    'order.created.v1',
    'payment.processed.v1',
    'stock.reserved.v1',
    'shipment.created.v1',
    'order.confirmed.v1',
  ],
  card_declined: ['order.created.v1', 'payment.failed.v1', 'order.cancelled.v1'],
  out_of_stock: [
    'order.created.v1',
    'payment.processed.v1',
    'stock.reservation-failed.v1',
    'order.cancelled.v1',
    'payment.refunded.v1',
  ],
  unsupported_country: [
    'order.created.v1',
    'payment.processed.v1',
    'stock.reserved.v1',
    'shipment.failed.v1',
    'order.cancelled.v1',
    'payment.refunded.v1',
    'stock.released.v1',
  ],
  deadline_exceeded: [
    'order.created.v1',
    'payment.processed.v1',
    'order.cancelled.v1',
    'payment.refunded.v1',
  ],
  customer_requested: ['order.created.v1', 'order.cancelled.v1'],
} as const

// The outcome of order i from its draw u and age; the failed step of a cancellation.
const OUTCOME = `CASE
    WHEN s.age < interval '10 minutes' AND s.u < 300 THEN
      (ARRAY['pending-payment', 'pending-inventory', 'pending-shipment'])[s.u % 3 + 1]
    WHEN s.age >= interval '10 minutes' AND s.u < 3 THEN 'pending-payment'
    WHEN s.u < 880 THEN 'confirmed'
    WHEN s.u < 940 THEN 'card_declined'
    WHEN s.u < 970 THEN 'out_of_stock'
    WHEN s.u < 980 THEN 'unsupported_country'
    WHEN s.u < 990 THEN 'deadline_exceeded'
    ELSE 'customer_requested' END`

const FAILED_STEP = `CASE s.outcome WHEN 'card_declined' THEN 'payment' WHEN 'out_of_stock' THEN 'stock'
    WHEN 'unsupported_country' THEN 'shipment' WHEN 'deadline_exceeded' THEN 'stock' END`

/**
 * Writes `count` orders with lines and timelines into the order database behind `pool` (migrated,
 * empty or not) and returns how many rows of each it wrote. Deterministic but for the ids and the
 * clock.
 */
export async function seedOrders(pool: pg.Pool, count: number, spanMs: number): Promise<Seeded> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query(
      `CREATE TEMP TABLE seed ON COMMIT DROP AS
       SELECT s.*, ${OUTCOME} AS outcome FROM (
         SELECT i, gen_random_uuid() AS id, (i * 7919 + i / 1000) % 1000 AS u,
           ($2::float8 * ($1 - i) / $1) * interval '1 millisecond' AS age, now() AS now
         FROM generate_series(1, $1::int) AS i) s`,
      [count, spanMs],
    )
    await client.query(
      `CREATE TEMP TABLE seed_timeline ON COMMIT DROP AS
       SELECT key AS outcome, ARRAY(SELECT jsonb_array_elements_text(value)) AS types FROM jsonb_each($1::jsonb)`,
      [JSON.stringify(TIMELINES)],
    )
    const orders = await client.query(
      `INSERT INTO orders (id, customer_id, status, currency, total_amount, payment_method, ship_name, ship_line1,
         ship_city, ship_postal_code, ship_country, cancellation_reason, failed_step, created_at, updated_at,
         confirmed_at, cancelled_at, deadline_at)
       SELECT s.id, gen_random_uuid(), st.status::"OrderStatus", 'EUR', 4499, 'tok_visa', 'Ana Lima', 'Rua 1',
         'Lisboa', '1000-001', 'PT',
         CASE WHEN st.status = 'CANCELLED' THEN s.outcome END, ${FAILED_STEP},
         s.now - s.age, COALESCE(s.now - s.age + st.took, s.now - s.age),
         CASE WHEN st.status = 'CONFIRMED' THEN s.now - s.age + st.took END,
         CASE WHEN st.status = 'CANCELLED' THEN s.now - s.age + st.took END,
         s.now - s.age + interval '10 minutes'
       FROM seed s, LATERAL (SELECT
         CASE WHEN s.outcome LIKE 'pending-%' THEN 'PENDING' WHEN s.outcome = 'confirmed' THEN 'CONFIRMED'
              ELSE 'CANCELLED' END AS status,
         CASE WHEN s.outcome NOT LIKE 'pending-%' THEN (20 + (s.u * 37) % 1980) * interval '1 millisecond' END AS took
       ) st`,
    )
    const lines = await client.query(
      `INSERT INTO order_lines (order_id, line_no, sku, quantity, unit_price)
       SELECT s.id, n, 'SKU-' || n, 1 + s.u % 3, 1250 FROM seed s, generate_series(1, 1 + s.i % 3) AS n`,
    )
    const events = await client.query(
      `INSERT INTO order_events (message_id, order_id, type, source, occurred_at, recorded_at, data)
       SELECT gen_random_uuid(), s.id, t.type,
         CASE split_part(t.type, '.', 1) WHEN 'stock' THEN 'inventory' ELSE split_part(t.type, '.', 1) END,
         s.now - s.age + t.n * interval '5 milliseconds', s.now - s.age + t.n * interval '5 milliseconds',
         jsonb_build_object('orderId', s.id)
       FROM seed s JOIN seed_timeline tl ON tl.outcome = s.outcome,
         unnest(tl.types) WITH ORDINALITY AS t(type, n)`,
    )
    await client.query('COMMIT')
    return { orders: orders.rowCount ?? 0, lines: lines.rowCount ?? 0, events: events.rowCount ?? 0 }
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  } finally {
    client.release()
  }
}
