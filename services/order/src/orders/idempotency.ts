import { createHash } from 'node:crypto'
import type { Db, Tx } from './types.js'

/** A stored first response to a keyed POST /orders. */
export interface StoredResponse {
  requestHash: string
  status: number
  body: unknown
}

/**
 * sha256 (hex) of the validated request body. The body is the zod parse output, whose keys follow
 * the schema's order, so two JSON texts with the same content in another key order hash the same.
 */
export const requestHash = (body: unknown): string =>
  createHash('sha256').update(JSON.stringify(body)).digest('hex')

/** The first response stored under `key`, if any. */
export async function findStoredResponse(db: Db, key: string): Promise<StoredResponse | undefined> {
  const row = await db.idempotencyKey.findUnique({ where: { key } })
  return row
    ? { requestHash: row.requestHash, status: row.responseStatus, body: row.responseBody }
    : undefined
}

/**
 * Stores the response of the request that created `orderId` under `key`, in the transaction that
 * created the order. Returns false when another request committed the key first: the unique index
 * makes this INSERT wait for a concurrent holder of the key and then skip, so the caller must roll
 * its order back and answer with the winner's response.
 */
export async function claimKey(
  tx: Tx,
  key: string,
  orderId: string,
  response: StoredResponse,
): Promise<boolean> {
  const { rowCount } = await tx.query({
    name: 'order.claim-key',
    text: `INSERT INTO idempotency_keys (key, request_hash, order_id, response_status, response_body)
      VALUES ($1, $2, $3::uuid, $4, $5::jsonb)
      ON CONFLICT (key) DO NOTHING`,
    values: [key, response.requestHash, orderId, response.status, JSON.stringify(response.body)],
  })
  return rowCount === 1
}
