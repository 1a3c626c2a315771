/**
 * GET /orders/stats in one statement (one snapshot, one round trip): the orders by status, the
 * PENDING ones by the step they wait for and past their deadline, and the orders that ended in each
 * 10-second bucket of the window with their created -> ended latency. What each part reads (EXPLAIN
 * on 100,000 orders, bench/console.ts): the PENDING rows of `orders_status_created_at_id_idx` with
 * one timeline probe each; the window's rows of the partial indexes `orders_confirmed_at_idx` and
 * `orders_cancelled_at_idx` (index-only, they include created_at); the counts of ended orders, the
 * whole of those two indexes (index-only). Times are the database's clock.
 */
import { Prisma, type PrismaClient } from '../generated/prisma/client.js'
import type { OrderStats } from '../schemas.js'
import { STATS_BUCKET_SECONDS } from '../schemas.js'
import { waitingForSql } from './waiting.js'

/** The statement of `orderStats` for a window of `windowSeconds` (a multiple of 10), for EXPLAIN. */
export function orderStatsSql(windowSeconds: number): Prisma.Sql {
  const bucket = Prisma.sql`${STATS_BUCKET_SECONDS}::int * interval '1 second'`
  const binOf = (at: Prisma.Sql) => Prisma.sql`date_bin(${bucket}, ${at}, timestamptz 'epoch')`
  return Prisma.sql`
    WITH clock AS (
      SELECT now() AS now,
        ${binOf(Prisma.sql`now()`)} - ${windowSeconds - STATS_BUCKET_SECONDS}::int * interval '1 second' AS first
    ), pending AS (
      SELECT ${waitingForSql('o')} AS step, o.deadline_at < clock.now AS overdue
      FROM orders o, clock WHERE o.status = 'PENDING'
    ), ended AS (
      SELECT o.confirmed_at AS at, true AS confirmed, o.confirmed_at - o.created_at AS took
      FROM orders o, clock WHERE o.confirmed_at >= clock.first
      UNION ALL
      SELECT o.cancelled_at, false, o.cancelled_at - o.created_at
      FROM orders o, clock WHERE o.cancelled_at >= clock.first
    ), per_bucket AS (
      SELECT ${binOf(Prisma.sql`e.at`)} AS at,
        count(*) FILTER (WHERE e.confirmed) AS confirmed, count(*) FILTER (WHERE NOT e.confirmed) AS cancelled,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY e.took) AS p50,
        percentile_disc(0.99) WITHIN GROUP (ORDER BY e.took) AS p99
      FROM ended e GROUP BY 1
    ), buckets AS (
      -- Every bucket of the window, empty ones too; an order ended after now (a service clock ahead
      -- of the database's) falls in no bucket.
      SELECT b.at, COALESCE(p.confirmed, 0) AS confirmed, COALESCE(p.cancelled, 0) AS cancelled, p.p50, p.p99
      FROM clock, generate_series(clock.first, clock.now, ${bucket}) AS b(at)
      LEFT JOIN per_bucket p ON p.at = b.at
    )
    SELECT (SELECT now FROM clock) AS at,
      (SELECT count(*) FROM pending)::int AS pending,
      (SELECT count(*) FROM orders WHERE confirmed_at IS NOT NULL)::int AS confirmed,
      (SELECT count(*) FROM orders WHERE cancelled_at IS NOT NULL)::int AS cancelled,
      (SELECT COALESCE(jsonb_object_agg(step, n), '{}') FROM (SELECT step, count(*)::int AS n FROM pending GROUP BY step) s) AS "byStep",
      (SELECT count(*) FROM pending WHERE overdue)::int AS overdue,
      (SELECT jsonb_agg(jsonb_build_object(
          'at', b.at, 'confirmed', b.confirmed, 'cancelled', b.cancelled,
          'p50', round(EXTRACT(EPOCH FROM b.p50) * 1000), 'p99', round(EXTRACT(EPOCH FROM b.p99) * 1000)
        ) ORDER BY b.at) FROM buckets b) AS buckets`
}

interface StatsRow {
  at: Date
  pending: number
  confirmed: number
  cancelled: number
  byStep: Partial<Record<keyof OrderStats['pendingByStep'], number>>
  overdue: number
  buckets: Array<{ at: string; confirmed: number; cancelled: number; p50: number | null; p99: number | null }>
}

/**
 * The order figures of the console (GET /orders/stats): counts now and `windowSeconds / 10`
 * buckets, oldest first, the last one still filling; a bucket's latencies are null when no order
 * ended in it. An order ends in the bucket of its confirmed_at or cancelled_at.
 * @param windowSeconds a multiple of 10, at least 10 (the route's schema checks it)
 */
export async function orderStats(db: PrismaClient, windowSeconds: number): Promise<OrderStats> {
  const [row] = await db.$queryRaw<StatsRow[]>(orderStatsSql(windowSeconds))
  if (!row) throw new Error('the stats statement returned no row')
  return {
    at: row.at.toISOString(),
    byStatus: { PENDING: row.pending, CONFIRMED: row.confirmed, CANCELLED: row.cancelled },
    pendingByStep: {
      payment: row.byStep.payment ?? 0,
      inventory: row.byStep.inventory ?? 0,
      shipment: row.byStep.shipment ?? 0,
    },
    pendingOverdue: row.overdue,
    buckets: row.buckets.map((b) => ({
      at: new Date(b.at).toISOString(),
      confirmed: b.confirmed,
      cancelled: b.cancelled,
      latencyP50Ms: b.p50,
      latencyP99Ms: b.p99,
    })),
  }
}
