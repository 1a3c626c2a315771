import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type pg from 'pg'
import type { Order } from './rules.js'
import { clientSql, setStock } from './store.js'

/** What a peer plugs into the HTTP facade: how it accepts a new order (records it and starts its saga durably). */
export interface Peer {
  /** Resolves once the order is recorded and its saga will run even if the process dies now. */
  accept(order: Order): Promise<void>
  /** Stops the peer's runtime (workers, connections). */
  stop(): Promise<void>
}

const ORDER_COLUMNS = `id, status, cancellation_reason AS "cancellationReason",
  created_at AS "createdAt", updated_at AS "updatedAt", created_at::text AS cursor`

/** GET /orders?limit&cursor&status: newest first, keyset paging, as the fleet's order service answers. */
async function listOrders(pool: pg.Pool, query: URLSearchParams): Promise<unknown> {
  const limit = Math.min(Math.max(Number(query.get('limit')) || 20, 1), 100)
  const where: string[] = []
  const values: unknown[] = []
  const status = query.get('status')
  if (status) where.push(`status = $${values.push(status)}`)
  const cursor = query.get('cursor')
  if (cursor) {
    const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
    where.push(`(created_at, id) < ($${values.push(createdAt)}::timestamptz, $${values.push(id)}::uuid)`)
  }
  const { rows } = await pool.query<{ id: string; cursor: string } & Record<string, unknown>>(
    `SELECT ${ORDER_COLUMNS} FROM orders ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`,
    values,
  )
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const nextCursor =
    rows.length > limit && last ? Buffer.from(`${last.cursor}|${last.id}`).toString('base64url') : null
  return { items: page.map(({ cursor: _, ...order }) => order), nextCursor }
}

const readBody = (req: http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined)
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
      }
    })
    req.on('error', reject)
  })

/**
 * The subset of the fleet's HTTP API that packages/load drives, answered from a peer's own tables:
 * `POST /orders` (201 `{ id }` once `peer.accept` resolved), `GET /orders` (list, keyset paging,
 * `status` filter), `PUT /stock/:sku` (`{ available }`) and `GET /health`. The body is not
 * validated beyond JSON: only the harness calls it. Errors answer 500 with the message.
 */
export function createApi(pool: pg.Pool, peer: Peer): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://peer')
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      res.end(text)
    }
    const route = async (): Promise<void> => {
      if (req.method === 'POST' && url.pathname === '/orders') {
        const order = { ...((await readBody(req)) as Omit<Order, 'id'>), id: randomUUID() }
        await peer.accept(order)
        return answer(201, { id: order.id })
      }
      if (req.method === 'GET' && url.pathname === '/orders')
        return answer(200, await listOrders(pool, url.searchParams))
      const stock = /^\/stock\/([^/]+)$/.exec(url.pathname)
      if (req.method === 'PUT' && stock) {
        const { available } = (await readBody(req)) as { available: number }
        await setStock(clientSql(pool), decodeURIComponent(stock[1]!), available)
        return answer(200, { sku: stock[1], available })
      }
      if (req.method === 'GET' && url.pathname === '/health') return answer(200, { ok: true })
      answer(404, { error: 'not found' })
    }
    route().catch((error: unknown) =>
      answer(500, { error: error instanceof Error ? error.message : String(error) }),
    )
  })
}
