import { producerOf, producers, sagaFacts, sagaMap, SERVICES } from '@saga/contracts'
import type { RunDatabases } from '../databases.js'

// Ids are derived in SQL from the order's number and the fact's routing key (an md5 made a version 4
// uuid, as the services' routes accept), so the four databases agree on every message id without
// passing them around.
const uuidOf = (text: string) =>
  `overlay(overlay(md5(${text}) placing '4' from 13) placing '8' from 17)::uuid`
const orderId = (g: string) => uuidOf(`'order:' || ${g}`)
const messageId = (g: string, routingKey: string) => uuidOf(`${g} || ':${routingKey}'`)
/** CUSTOMER_ORDERS orders per customer: orders n, n + count/5, … share one. */
const CUSTOMER_ORDERS = 5
const customerId = (g: string, count: number) =>
  `md5('customer:' || (${g} % ${Math.max(1, Math.ceil(count / CUSTOMER_ORDERS))}))::uuid`
const idempotencyKey = (g: string) => `'bench-key-' || ${g}`

/**
 * Seeds `count` CONFIRMED sagas into a run's four databases the way the fleet would have left them,
 * each about a second long and placed over the last 50 minutes: the order with one line and
 * its timeline (order service), every fact of the confirmed chain in its producer's outbox (published,
 * correlation id the order's, causation id the fact before), and each consuming handler's inbox row.
 * Each order was placed with an Idempotency-Key; a customer placed five of them.
 * Set-based SQL (generate_series), a few seconds per 100,000 orders; the tables are ANALYZEd after.
 */
export async function seedConfirmedSagas(dbs: RunDatabases, count: number): Promise<void> {
  const facts = sagaFacts()
  // Within the e2e fleet's OUTBOX_RETENTION_MS (an hour), so housekeeping deletes none of it meanwhile.
  const spanSeconds = 3_000
  const placed = (g: string) => `now() - make_interval(secs => ${spanSeconds} * ${g}::float8 / ${count} + 5)`
  const at = (g: string, i: number) => `${placed(g)} + make_interval(secs => ${0.2 * i})`
  const series = `generate_series(1, ${count}) AS g`

  await dbs.query(
    'order',
    `INSERT INTO orders (id, customer_id, status, currency, total_amount, payment_method, ship_name, ship_line1,
       ship_city, ship_postal_code, ship_country, created_at, updated_at, confirmed_at, deadline_at)
     SELECT ${orderId('g')}, ${customerId('g', count)}, 'CONFIRMED', 'EUR', 2500, 'tok_visa', 'Ada Lovelace',
       '1 Analytical Way', 'Berlin', '10115', 'DE', ${placed('g')}, ${at('g', facts.length)}, ${at('g', facts.length)},
       ${placed('g')} + interval '5 minutes'
     FROM ${series}`,
  )
  await dbs.query(
    'order',
    `INSERT INTO order_lines (order_id, line_no, sku, quantity, unit_price)
     SELECT ${orderId('g')}, 1, 'SKU-BENCH', 2, 1250 FROM ${series}`,
  )
  await dbs.query(
    'order',
    `INSERT INTO idempotency_keys (key, request_hash, order_id, response_status, response_body, created_at)
     SELECT ${idempotencyKey('g')}, md5(g::text) || md5(g::text), ${orderId('g')}, 201,
       jsonb_build_object('id', ${orderId('g')}), ${placed('g')}
     FROM ${series}`,
  )
  for (const [i, routingKey] of facts.entries()) {
    const producer = producerOf(routingKey)
    const type = producers[producer].find((e) => e.routingKey === routingKey)!.type
    const causation = i === 0 ? 'NULL' : `${messageId('g', facts[i - 1]!)}::text`
    await dbs.query(
      producer,
      `INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id, occurred_at, available_at,
         attempts, published_at)
       SELECT ${messageId('g', routingKey)}, '${type}', '${routingKey}', jsonb_build_object('orderId', ${orderId('g')}),
         jsonb_build_object('correlationId', ${orderId('g')}::text, 'causationId', ${causation}),
         ${orderId('g')}::text, ${at('g', i)}, ${at('g', i)}, 1, ${at('g', i)} + interval '5 milliseconds'
       FROM ${series}`,
    )
    await dbs.query(
      'order',
      `INSERT INTO order_events (message_id, order_id, type, source, occurred_at, recorded_at, data)
       SELECT ${messageId('g', routingKey)}, ${orderId('g')}, '${type}', '${producer}', ${at('g', i)},
         ${at('g', i)} + interval '20 milliseconds', jsonb_build_object('orderId', ${orderId('g')})
       FROM ${series}`,
    )
    for (const reaction of sagaMap) {
      if (reaction.reactsTo.routingKey !== routingKey || reaction.recorder === true) continue
      await dbs.query(
        reaction.service,
        `INSERT INTO inbox_message (message_id, handler, received_at)
         SELECT ${messageId('g', routingKey)}, '${reaction.handler}', ${at('g', i)} + interval '15 milliseconds'
         FROM ${series}`,
      )
    }
  }
  for (const service of SERVICES) await dbs.query(service, 'ANALYZE')
}

/** The ids someone may hold for seeded order `n` of `count` (1-based): what a search starts from. */
export interface SeededIds {
  orderId: string
  customerId: string
  /** The message id of its PaymentProcessed (payment's outbox, inventory's inbox, the order's timeline). */
  messageId: string
  idempotencyKey: string
}

/** The ids `seedConfirmedSagas(dbs, count)` gave its order number `n`, as PostgreSQL computes them. */
export async function seededIds(dbs: RunDatabases, count: number, n: number): Promise<SeededIds> {
  const [row] = await dbs.query<SeededIds>(
    'order',
    `SELECT ${orderId('$1::int')}::text AS "orderId", ${customerId('$1::int', count)}::text AS "customerId",
       ${messageId('$1::int', 'payment.processed')}::text AS "messageId", ${idempotencyKey('$1::int')} AS "idempotencyKey"`,
    [n],
  )
  return row!
}

/** The id `seedConfirmedSagas` gave its order number `n` (1-based), as PostgreSQL computes it. */
export async function seededOrderId(dbs: RunDatabases, n: number): Promise<string> {
  const [row] = await dbs.query<{ id: string }>('order', `SELECT ${orderId('$1::int')}::text AS id`, [n])
  return row!.id
}
