/**
 * The bounds every connection of a service's pool runs under, in ms (0 disables one, as in
 * PostgreSQL). Defaults: `DEFAULT_SESSION_LIMITS`; env: DATABASE_STATEMENT_TIMEOUT_MS,
 * DATABASE_LOCK_TIMEOUT_MS, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS.
 */
export interface SessionLimits {
  /** `statement_timeout`: the server cancels a statement running longer (SQLSTATE 57014). */
  statementTimeoutMs: number
  /** `lock_timeout`: the server cancels a statement waiting longer for a lock (SQLSTATE 55P03). */
  lockTimeoutMs: number
  /**
   * `idle_in_transaction_session_timeout`: the server ends a session idle this long inside a
   * transaction (SQLSTATE 25P03), releasing its locks and its snapshot (which holds back VACUUM).
   */
  idleInTransactionTimeoutMs: number
}

/**
 * The fleet's defaults, also set on each service role by `npm run bootstrap` and
 * infra/postgres/create-service-databases.sh. Why these numbers: a request blocked by a lock (a
 * migration queued behind a long transaction) fails within 2 s and frees its connection, which is
 * under Prisma's 5 s wait for a connection (`prismaDatabase`'s maxWaitMs); no service statement needs 5 s, and
 * Prisma gives up on a transaction after 10 s, so a server-side cut at 5 s keeps a slow statement
 * from outliving its request; 15 s idle inside a transaction is past Prisma's 10 s limit, so it only
 * catches a client that froze or lost track of its transaction.
 */
export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  statementTimeoutMs: 5_000,
  lockTimeoutMs: 2_000,
  idleInTransactionTimeoutMs: 15_000,
}

/**
 * How long a service's pooled connection may sit idle before the pool closes it, ms (env
 * DATABASE_POOL_IDLE_TIMEOUT_MS; 0 = never). pg's own default is 10 s, which closes most of a pool in
 * every pause longer than that; the next burst then pays a new backend per connection, each
 * reading its catalog caches and planning every statement again. Measured with `npm run load` at
 * 50 orders/s × 30 s after 20 s idle (docs/performance.md, "Connections kept through a pause"):
 * POST → CONFIRMED p99 median 276 ms (73-596) with pg's 10 s against 82 ms (72-196) with connections
 * kept. Ten minutes, HikariCP's idleTimeout, still gives back what a burst opened once the service
 * has been quiet for a while.
 */
export const DEFAULT_POOL_IDLE_TIMEOUT_MS = 600_000

/** What `pg.Pool` gets: the URL without its own `options`, and the merged startup options. */
export interface SessionConnection {
  connectionString: string
  /** PostgreSQL startup options (`-c name=value ...`), sent in the connection's first packet. */
  options: string
}

const checkedMs = (name: string, value: number): number => {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a whole number of ms >= 0, got ${value}`)
  return value
}

/**
 * The connection settings of a service's pool: the session time zone pinned to UTC, JIT compilation
 * off, and the session limits, as startup options. Startup options cost no round trip and take precedence over
 * `ALTER DATABASE/ROLE ... SET` (PostgreSQL docs, "Setting Parameters"), so no database or role
 * default can change them; the database's own `options` URL parameter, if any, is kept but ours win.
 *
 * Why UTC matters: @prisma/adapter-pg sends a DateTime as a UTC wall-clock time without an offset,
 * which PostgreSQL reads in the session's time zone, and reads a `timestamptz` back by replacing the
 * session's offset with `+00:00`. Under `ALTER DATABASE ... SET timezone TO 'America/New_York'` an
 * order placed at 11:52 UTC was stored as 16:52 UTC and older rows read back five hours early. In a
 * UTC session both conversions are the identity; pg (raw SQL) sends and reads offsets, so it is
 * right either way.
 *
 * Why JIT is off: PostgreSQL compiles a plan whose estimated cost passes `jit_above_cost` (100,000),
 * and the estimate of a read with a correlated subquery per row (the order service's `waitingFor`
 * filter and stats) passes it on a few thousand PENDING orders: compiling took 60-340 ms for a
 * statement that runs in 3 ms without it (EXPLAIN on 100,000 orders, services/order/bench). The
 * services run short OLTP statements, where JIT never pays off.
 * @throws RangeError when a limit is not a whole number of ms >= 0
 */
export function sessionConnection(databaseUrl: string, limits: SessionLimits): SessionConnection {
  const url = new URL(databaseUrl)
  const own = url.searchParams.get('options')
  url.searchParams.delete('options')
  const ours = [
    'TimeZone=UTC',
    'jit=off',
    `statement_timeout=${checkedMs('statementTimeoutMs', limits.statementTimeoutMs)}`,
    `lock_timeout=${checkedMs('lockTimeoutMs', limits.lockTimeoutMs)}`,
    `idle_in_transaction_session_timeout=${checkedMs('idleInTransactionTimeoutMs', limits.idleInTransactionTimeoutMs)}`,
  ].map((setting) => `-c ${setting}`)
  return { connectionString: url.toString(), options: [own, ...ours].filter(Boolean).join(' ') }
}
