import type { Pool } from 'pg'
import { Gauge, type Registry } from 'prom-client'

/** One look at the database's vacuum health, taken at most once per scrape. */
interface DatabaseSnapshot {
  /** s; 0 when no other session has a transaction open */
  oldestTransactionAgeS: number
  /** transactions (xids) between the oldest snapshot any session holds and now; 0 when none */
  oldestXminAge: number
  /** n_dead_tup by table name */
  deadRows: Record<string, number>
}

/** The tables whose dead rows are exported: messaging's, churned by every message. */
export const WATCHED_TABLES = ['outbox_message', 'inbox_message'] as const

// One round trip. Only this database's sessions matter: for a user table, VACUUM's horizon is set by
// the transactions and snapshots of sessions in the same database (and replication slots, which
// this fleet does not use). Seeing other roles' xact_start needs pg_read_all_stats (bootstrap grants
// it); backend_xmin is visible to everyone.
const SNAPSHOT_SQL = `
SELECT
  (SELECT greatest(0, extract(epoch FROM now() - min(xact_start)))::float8 FROM pg_stat_activity
    WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()) AS oldest_s,
  (SELECT max(age(backend_xmin))::int8 FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()) AS xmin_age,
  (SELECT coalesce(json_object_agg(relname, n_dead_tup), '{}'::json) FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname = ANY($1)) AS dead_rows`

interface SnapshotRow {
  oldest_s: number | null
  xmin_age: string | null
  dead_rows: Record<string, string | number>
}

async function takeSnapshot(pool: Pool, timeoutMs: number): Promise<DatabaseSnapshot | undefined> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs)
  })
  const query = pool
    .query<SnapshotRow>(SNAPSHOT_SQL, [WATCHED_TABLES])
    .then(({ rows: [row] }) =>
      row
        ? {
            oldestTransactionAgeS: row.oldest_s ?? 0,
            oldestXminAge: Number(row.xmin_age ?? 0),
            deadRows: Object.fromEntries(Object.entries(row.dead_rows).map(([k, v]) => [k, Number(v)])),
          }
        : undefined,
    )
    // A scrape while the database is down exports no database series; readiness reports the outage.
    .catch(() => undefined)
  return Promise.race([query, timeout]).finally(() => clearTimeout(timer))
}

// Every gauge here is a property of the database, not of the instance that reports it.
const PER_DATABASE =
  'Per database: every instance reports the same value; aggregate with max by (job), never sum.'

/**
 * Registers the database series on `registry`, read from `pool` when scraped (one query per scrape,
 * bounded by `timeoutMs`, default 1,000 ms; on failure or timeout the series are left out):
 * - `saga_db_oldest_transaction_age_seconds`: age of the oldest open transaction of any session in
 *   this database (an operator's REPEATABLE READ left open, a stuck client), in s;
 * - `saga_db_oldest_xmin_age_transactions`: how many transactions old the oldest snapshot held in
 *   this database is, which is what stops VACUUM from removing dead rows;
 * - `saga_db_dead_rows{table}`: `n_dead_tup` of outbox_message and inbox_message (PostgreSQL's
 *   statistics, updated within about a second of each write).
 * Alert on the first (e.g. > 300 s) and on dead rows that only grow: the relay's claim slows down
 * as dead index entries pile up (docs/architecture.md, "Retention and VACUUM").
 */
export function registerDatabaseMetrics(registry: Registry, pool: Pool, timeoutMs = 1_000): void {
  let current: { at: number; snapshot: Promise<DatabaseSnapshot | undefined> } | undefined
  // The three gauges are collected concurrently at each scrape: they share one query.
  const snapshot = () => {
    if (!current || Date.now() - current.at > 500)
      current = { at: Date.now(), snapshot: takeSnapshot(pool, timeoutMs) }
    return current.snapshot
  }
  // One value of the snapshot; no value (reset) when the snapshot could not be taken.
  const snapshotGauge = (name: string, help: string, value: (s: DatabaseSnapshot) => number) =>
    new Gauge({
      name,
      help: `${help} ${PER_DATABASE}`,
      registers: [registry],
      async collect() {
        const s = await snapshot()
        if (s) this.set(value(s))
        else this.reset()
      },
    })
  snapshotGauge(
    'saga_db_oldest_transaction_age_seconds',
    'Age of the oldest open transaction of any session in this database, in seconds.',
    (s) => s.oldestTransactionAgeS,
  )
  snapshotGauge(
    'saga_db_oldest_xmin_age_transactions',
    'Age in transactions of the oldest snapshot held in this database (it holds back VACUUM).',
    (s) => s.oldestXminAge,
  )
  new Gauge({
    name: 'saga_db_dead_rows',
    help: `Dead rows (n_dead_tup) of the messaging tables, by table. ${PER_DATABASE}`,
    labelNames: ['table'],
    registers: [registry],
    async collect() {
      const s = await snapshot()
      this.reset()
      for (const [table, n] of Object.entries(s?.deadRows ?? {})) this.set({ table }, n)
    },
  })
}
