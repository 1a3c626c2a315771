import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { ChildProcess } from 'node:child_process'
import { freePort, waitFor, type Contestant } from './contestants.js'
import { databaseUrl } from './databases.js'
import { judge, withClient, type OrderEffects, type Verdict } from './invariants.js'
import { startProcess, stopProcess } from './procs.js'
import { INITIAL_STOCK } from './rules.js'

const FLEET = fileURLToPath(new URL('../../fleet/dist/', import.meta.url))
const SERVICES = ['order', 'payment', 'inventory', 'shipment'] as const

/** The fleet's reservation and shipment in the invariants' vocabulary (its refusals leave no row: the order's reason tells). */
function fleetEffects(
  order: { status: string; reason: string | null; total: bigint },
  payment: { status: string; amount: bigint; rows: number } | undefined,
  refund: { amount: bigint; rows: number } | undefined,
  reservation: string[] | undefined,
  shipments: number,
): OrderEffects {
  let paid: string | null = null
  if (payment?.status === 'DECLINED') paid = 'declined'
  else if (payment)
    paid = refund ? (refund.amount === payment.amount ? 'refunded' : 'partly refunded') : 'captured'
  let held: string | null = null
  if (reservation) held = reservation.length === 1 ? reservation[0]!.toLowerCase() : 'mixed'
  else if (order.reason === 'out_of_stock' || order.reason === 'unknown_sku') held = order.reason
  let shipped: string | null = shipments > 0 ? 'created' : null
  if (!shipped && order.reason === 'unsupported_country') shipped = order.reason
  return {
    ...order,
    payment: paid,
    amount: payment?.amount ?? null,
    reservation: held,
    shipment: shipped,
    effects: { payment: payment?.rows ?? 0, refund: refund?.rows ?? 0, shipment: shipments },
  }
}

/** Rows by order id. */
const byOrder = <R extends { order_id: string }, T>(rows: R[], map: (row: R) => T): Map<string, T> =>
  new Map(rows.map((row) => [row.order_id, map(row)]))

/** Reads the fleet's four databases (`<prefix><service>_service`) into the invariants' shape and judges them. */
async function checkFleet(adminUrl: string, prefix: string): Promise<Verdict> {
  const url = (service: string) => databaseUrl(adminUrl, `${prefix}${service}_service`)
  type Counted = { order_id: string; amount: string; n: string }
  const orders = await withClient(url('order'), (c) =>
    c.query<{ id: string; status: string; reason: string | null; total: string }>(
      'SELECT id, status, cancellation_reason AS reason, total_amount AS total FROM orders',
    ),
  )
  const [payments, refunds] = await withClient(url('payment'), async (c) => [
    await c.query<Counted & { status: string }>(
      'SELECT order_id, min(status::text) AS status, min(amount) AS amount, count(*) AS n FROM payments GROUP BY order_id',
    ),
    await c.query<Counted & { status: string }>(
      `SELECT order_id, '' AS status, sum(amount) AS amount, count(*) AS n FROM refunds GROUP BY order_id`,
    ),
  ])
  const [reservations, stock] = await withClient(url('inventory'), async (c) => [
    await c.query<{ order_id: string; statuses: string[] }>(
      'SELECT order_id, array_agg(DISTINCT status::text) AS statuses FROM reservation GROUP BY order_id',
    ),
    await c.query<{ sku: string; available: number; reserved: number; held: number }>(
      `SELECT s.sku, s.available, s.reserved, coalesce((SELECT sum(quantity) FROM reservation r
         WHERE r.sku = s.sku AND r.status = 'RESERVED'), 0)::int AS held
       FROM stock s WHERE s.sku = ANY($1)`,
      [Object.keys(INITIAL_STOCK)],
    ),
  ])
  const shipments = await withClient(url('shipment'), (c) =>
    c.query<{ order_id: string; n: string }>(
      'SELECT order_id, count(*) AS n FROM shipment GROUP BY order_id',
    ),
  )
  const pay = byOrder(payments.rows, (r) => ({
    status: r.status,
    amount: BigInt(r.amount),
    rows: Number(r.n),
  }))
  const back = byOrder(refunds.rows, (r) => ({ amount: BigInt(r.amount), rows: Number(r.n) }))
  const hold = byOrder(reservations.rows, (r) => r.statuses)
  const ship = byOrder(shipments.rows, (r) => Number(r.n))
  const effects = orders.rows.map((o) =>
    fleetEffects(
      { status: o.status, reason: o.reason, total: BigInt(o.total) },
      pay.get(o.id),
      back.get(o.id),
      hold.get(o.id),
      ship.get(o.id) ?? 0,
    ),
  )
  const balances = stock.rows.flatMap((s) => [
    { sku: s.sku, available: s.available, expected: (INITIAL_STOCK[s.sku] ?? 0) - s.held },
    { sku: `${s.sku} (reserved column)`, available: s.reserved, expected: s.held },
  ])
  return judge(effects, balances)
}

/**
 * This fleet as `npm start -- --prefix <p>` runs it (packages/fleet: four services and the console,
 * its own databases, exchange, queues and broker users, on free ports), the benchmark's two skus
 * stocked through `PUT /stock/:sku`; stopped with SIGTERM, then removed with
 * `npm run bootstrap -- --prefix <p> --drop`.
 */
export const fleet: Contestant = {
  name: 'this fleet',
  async start(prefix, adminUrl) {
    const ports = Object.fromEntries(
      await Promise.all(SERVICES.map(async (s) => [s, await freePort()] as const)),
    )
    const env = {
      ...process.env,
      ...Object.fromEntries(SERVICES.map((s) => [`${s.toUpperCase()}_PORT`, String(ports[s])])),
      CONSOLE_PORT: String(await freePort()),
      ADMIN_TOKEN: randomUUID(),
      POSTGRES_URL: adminUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    }
    let child: ChildProcess | undefined
    const stop = async () => {
      if (child) await stopProcess(child, 40_000)
      await promisify(execFile)(
        process.execPath,
        [`${FLEET}bootstrap-cli.js`, '--prefix', prefix, '--drop'],
        { env },
      )
    }
    try {
      child = await startProcess(
        'fleet',
        process.execPath,
        [`${FLEET}start.js`, '--prefix', prefix],
        env,
        /all services ready/,
        180_000,
      )
      for (const s of SERVICES) await waitFor(`http://127.0.0.1:${ports[s]}/health/ready`, 180_000)
      const inventory = `http://127.0.0.1:${ports.inventory}`
      for (const [sku, available] of Object.entries(INITIAL_STOCK)) {
        const res = await fetch(`${inventory}/stock/${sku}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ available }),
        })
        if (!res.ok) throw new Error(`PUT /stock/${sku} answered ${res.status}: ${await res.text()}`)
      }
      return {
        url: `http://127.0.0.1:${ports.order}`,
        roots: () => (child?.pid ? [child.pid] : []),
        databases: SERVICES.map((s) => `${prefix}${s}_service`),
        usesBroker: true,
        check: () => checkFleet(adminUrl, prefix),
        stop,
      }
    } catch (error) {
      await stop().catch(() => undefined)
      throw error
    }
  },
}
