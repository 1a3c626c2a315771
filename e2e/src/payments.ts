import type { RunDatabases } from './databases.js'

/**
 * The payment service's money movements: captures and refunds per order, amounts in minor units
 * (as text: bigint columns). Kept in one place because it is the one query that depends on the
 * payment service's tables.
 */
export async function payments(dbs: RunDatabases): Promise<{
  captures: { order_id: string; amount: string }[]
  refunds: { order_id: string; amount: string }[]
}> {
  const captures = await dbs.query<{ order_id: string; amount: string }>(
    'payment',
    `SELECT order_id, amount::text AS amount FROM payments WHERE status = 'CAPTURED' ORDER BY order_id`,
  )
  const refunds = await dbs.query<{ order_id: string; amount: string }>(
    'payment',
    `SELECT order_id, amount::text AS amount FROM refunds ORDER BY order_id`,
  )
  return { captures, refunds }
}
