import pg from 'pg'
import type {
  Database,
  InboxEntry,
  InboxOutcome,
  PgClientLike,
  PrismaTransactionLike,
  TransactionClient,
} from './types.js'

/** Thrown when messaging is handed something that is not an open transaction. */
export class NotInTransactionError extends Error {
  constructor(what: string) {
    super(
      `${what}: expected an open transaction (a Prisma interactive-transaction client, or a pg client after BEGIN); ` +
        'writing outside one would autocommit the row apart from the business change',
    )
    this.name = 'NotInTransactionError'
  }
}

/** The part of a PrismaClient messaging uses: its interactive transactions. */
export interface PrismaClientLike<Tx extends PrismaTransactionLike> {
  $transaction<T>(fn: (tx: Tx) => Promise<T>, options?: { maxWait?: number; timeout?: number }): Promise<T>
}

/** Options of `prismaDatabase`. */
export interface PrismaDatabaseOptions {
  /** Longest a transaction may run before Prisma rolls it back, ms. Default 10,000. */
  timeoutMs?: number
  /** Longest to wait for a pool connection to start one, ms. Default 5,000. */
  maxWaitMs?: number
}

/**
 * `Database` over a PrismaClient: each `transaction(fn)` is a Prisma interactive transaction.
 * Example: `prismaDatabase(prisma, { timeoutMs: 10_000 })`.
 */
export function prismaDatabase<Tx extends PrismaTransactionLike>(
  prisma: PrismaClientLike<Tx>,
  options: PrismaDatabaseOptions = {},
): Database<Tx> {
  const timeout = options.timeoutMs ?? 10_000
  const maxWait = options.maxWaitMs ?? 5_000
  return { transaction: (fn) => prisma.$transaction(fn, { timeout, maxWait }) }
}

/**
 * Statements a `pgDatabase` transaction sends in the COMMIT's round trip, per checked-out client;
 * only clients inside a `pgDatabase` transaction are keys (see `deferToCommit`).
 */
const commitTails = new WeakMap<object, string[]>()

/**
 * Defers a statement to the COMMIT of the `pgDatabase` transaction `tx` belongs to: it is sent in
 * the same simple-query message as COMMIT (one round trip instead of two), still inside the
 * transaction, so it commits with everything else or not at all (a failing statement aborts the rest
 * of the message, COMMIT included, and the transaction rolls back). `build` gets pg's
 * `escapeLiteral` and returns the SQL with its values inlined as literals (a simple query has no
 * parameters). Returns false, deferring nothing, when `tx` is not in a `pgDatabase` transaction (a
 * Prisma transaction, a pg client the caller began itself): the caller then runs the statement now.
 * Only for writes nobody reads back inside the transaction (the outbox INSERT).
 */
export function deferToCommit(
  tx: TransactionClient,
  build: (literal: (value: string) => string) => string,
): boolean {
  const tail = commitTails.get(tx)
  if (!tail) return false
  tail.push(build(pg.escapeLiteral))
  return true
}

const recordInboxSql = (entry: InboxEntry): string =>
  `INSERT INTO inbox_message (message_id, handler) VALUES (${pg.escapeLiteral(entry.messageId)}::uuid, ${pg.escapeLiteral(entry.handler)}) ON CONFLICT DO NOTHING`

const recordInboxBatchSql = (entries: readonly InboxEntry[]): string =>
  'INSERT INTO inbox_message (message_id, handler) VALUES ' +
  entries
    .map((entry) => `(${pg.escapeLiteral(entry.messageId)}::uuid, ${pg.escapeLiteral(entry.handler)})`)
    .join(', ') +
  ' ON CONFLICT DO NOTHING RETURNING message_id::text AS id'

/**
 * One transaction on a pooled client: sends `begin` (BEGIN, or BEGIN and the inbox INSERT in one
 * simple query), runs `fn` with the client and the begin's results, then COMMIT preceded by every
 * statement `deferToCommit` collected, in one simple query. ROLLBACK when anything throws (the
 * original error is rethrown); a client whose ROLLBACK failed, or whose connection died during the
 * transaction, is destroyed, not reused.
 */
async function onPooledClient<T>(
  pool: pg.Pool,
  begin: string,
  fn: (client: pg.PoolClient, begun: pg.QueryResult | pg.QueryResult[]) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  // A checked-out client whose connection dies between two statements emits 'error', and pg-pool
  // listens only while a client is idle: without this the process would get an uncaught exception
  // (the next statement, or COMMIT, then fails and the transaction rolls back as usual).
  const onError = (error: Error): void => {
    broken = error
  }
  client.on('error', onError)
  const tail: string[] = []
  try {
    const begun = (await client.query(begin)) as pg.QueryResult | pg.QueryResult[]
    commitTails.set(client, tail)
    const result = await fn(client, begun)
    commitTails.delete(client)
    tail.push('COMMIT')
    await client.query(tail.join(';\n'))
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError
    })
    throw error
  } finally {
    commitTails.delete(client)
    client.off('error', onError)
    client.release(broken)
  }
}

/**
 * `Database` over a pg Pool: BEGIN on a pooled client, COMMIT when `fn` resolves, ROLLBACK when it
 * throws (the original error is rethrown). A client whose ROLLBACK failed, or whose connection died
 * during the transaction, is destroyed, not reused.
 *
 * Round trips: `enqueue`'s outbox INSERTs are sent with COMMIT, in one simple-query message
 * (`deferToCommit`), and `inboxTransaction` sends BEGIN and the inbox INSERT as one, so a handler
 * transaction costs two round trips besides the handler's own statements, where one statement per
 * message would cost four (BEGIN, inbox INSERT, outbox INSERT, COMMIT). Each round trip is a socket
 * write and a wake-up on both sides, the largest per-message cost in a service's profile.
 * `inboxBatchTransaction` does the same for several deliveries of one queue: BEGIN and one
 * multi-row inbox INSERT, the handlers, then every deferred outbox INSERT with the one COMMIT.
 */
export function pgDatabase(pool: pg.Pool): Database<pg.PoolClient> {
  return {
    transaction: (fn) => onPooledClient(pool, 'BEGIN', (client) => fn(client)),
    inboxTransaction: <T>(entry: InboxEntry, fn: (tx: pg.PoolClient) => Promise<T>) =>
      onPooledClient<InboxOutcome<T>>(pool, `BEGIN;\n${recordInboxSql(entry)}`, async (client, begun) => {
        // A two-statement simple query answers with one result per statement.
        const inserted = Array.isArray(begun) ? begun[1] : undefined
        if (inserted?.rowCount !== 1) return { fresh: false }
        return { fresh: true, value: await fn(client) }
      }),
    inboxBatchTransaction: <T>(
      entries: readonly InboxEntry[],
      fn: (tx: pg.PoolClient, fresh: ReadonlySet<string>) => Promise<T>,
    ) =>
      onPooledClient<T>(pool, `BEGIN;\n${recordInboxBatchSql(entries)}`, (client, begun) => {
        const inserted = Array.isArray(begun) ? begun[1] : undefined
        const rows = (inserted?.rows ?? []) as Array<{ id: string }>
        return fn(client, new Set(rows.map((row) => row.id)))
      }),
  }
}

/** Whether `tx` is a Prisma client (root or transaction) rather than a pg client. */
export function isPrismaClient(tx: TransactionClient): tx is PrismaTransactionLike {
  return typeof (tx as Partial<PrismaTransactionLike>).$executeRawUnsafe === 'function'
}

/** Result of `execute`: affected rows, and rows for a SELECT or a statement with RETURNING. */
export interface ExecuteResult<R = Record<string, unknown>> {
  rowCount: number
  rows: R[]
}

const RETURNS_ROWS = /^\s*(select|with|values)\b|\breturning\b/i

/**
 * Runs one parameterised statement (`$1`, `$2`, ...) on either transaction kind. On Prisma a
 * statement that returns rows (SELECT/WITH/VALUES or RETURNING) goes through `$queryRawUnsafe` and
 * `rowCount` is the number of rows; any other through `$executeRawUnsafe` (rows is empty).
 * Cast parameters in SQL (`$1::uuid`, `$2::jsonb`): Prisma sends them untyped.
 */
export async function execute<R = Record<string, unknown>>(
  tx: TransactionClient,
  sql: string,
  params: unknown[] = [],
): Promise<ExecuteResult<R>> {
  if (isPrismaClient(tx)) {
    if (RETURNS_ROWS.test(sql)) {
      const rows = await tx.$queryRawUnsafe<R[]>(sql, ...params)
      return { rowCount: rows.length, rows }
    }
    return { rowCount: await tx.$executeRawUnsafe(sql, ...params), rows: [] }
  }
  const result = await tx.query(sql, params)
  return { rowCount: result.rowCount ?? 0, rows: result.rows as R[] }
}

type PgClientProbe = PgClientLike & {
  totalCount?: unknown
  getTransactionStatus?: () => string | null
}

/**
 * Refuses anything that is not an open transaction, with `NotInTransactionError`:
 * - a root PrismaClient (it has `$connect`; an interactive-transaction client does not, checked
 *   on Prisma 7.10);
 * - a pg Pool (it has `totalCount`: each query would autocommit on some pooled connection);
 * - a pg client outside BEGIN. pg >= 8.12 keeps the server's transaction status from the last
 *   ReadyForQuery message ('I' idle, 'T' in a transaction, 'E' failed transaction), so the check
 *   costs no round trip. Older pg: a SAVEPOINT probe (fails outside a transaction block), two
 *   round trips (measured: a minimal BEGIN/COMMIT went from 0.18 to 0.53 ms with it).
 */
export async function assertInTransaction(tx: TransactionClient, what = 'enqueue'): Promise<void> {
  if (isPrismaClient(tx)) {
    if (typeof (tx as { $connect?: unknown }).$connect === 'function') {
      throw new NotInTransactionError(
        `${what} got a root PrismaClient, not the client of prisma.$transaction`,
      )
    }
    return
  }
  const client = tx as PgClientProbe
  if (client.totalCount !== undefined) {
    throw new NotInTransactionError(`${what} got a pg Pool, not a client inside BEGIN`)
  }
  if (typeof client.getTransactionStatus === 'function') {
    const status = client.getTransactionStatus()
    if (status === 'T') return
    if (status === 'E')
      throw new NotInTransactionError(`${what} got a pg client whose transaction already failed`)
    throw new NotInTransactionError(`${what} got a pg client outside BEGIN`)
  }
  try {
    await client.query('SAVEPOINT messaging_probe')
  } catch {
    throw new NotInTransactionError(`${what} got a pg client outside BEGIN`)
  }
  await client.query('RELEASE SAVEPOINT messaging_probe')
}
