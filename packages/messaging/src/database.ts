import type pg from 'pg'
import type { OutboxHeaders } from './outbox/envelope.js'
import {
  BEGIN,
  BEGIN_WITH_INBOX_RESULTS,
  beginWithInboxBatchInsert,
  beginWithInboxInsert,
  COMMIT,
  dueOutboxInsert,
  expectResults,
  heldOutboxInsert,
  RELEASE_SAVEPOINT_PROBE,
  ROLLBACK,
  SAVEPOINT_PROBE,
  type StatementResult,
} from './sql.js'
import type { Database, PgClientLike, PrismaTransactionLike, TransactionClient } from './types.js'

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
 * Where a `pgDatabase` transaction hands the outbox rows it committed, for this process to publish
 * (the relay's `committed`). While `holdMs()` gives a number, `enqueue` inserts rows that far ahead,
 * so no sweep claims them before the hold passed; while it gives undefined (the link is down), rows
 * are inserted due and `wake()` runs after the commit.
 */
export interface CommittedRowSink {
  /** How far ahead `available_at` of a row handed over is set, ms; undefined: do not hand rows over now. */
  holdMs(): number | undefined
  /** Takes the rows of a committed transaction, in the order they were enqueued. Never throws. */
  publish(rows: CommittedRow[]): void
  /** The transaction committed rows that were not handed over: the relay looks now. */
  wake(): void
}

/** An outbox row handed to a `CommittedRowSink` after its transaction committed. */
export interface CommittedRow {
  id: string
  type: string
  routing_key: string
  /** The payload as enqueued (serialised once, by `enqueue`). */
  payload_json: string
  headers: OutboxHeaders
  aggregate_id: string | null
  /** The database's `now()` of the INSERT, as stored. */
  occurred_at: Date
  attempts: number
  /** When the transaction committed (`performance.now()`, ms). */
  committedAt: number
}

/** An outbox row as `enqueue` defers it, before its COMMIT gives it `occurred_at`. */
type DeferredRow = Omit<CommittedRow, 'occurred_at' | 'committedAt'>

/** What a `pgDatabase` transaction's COMMIT will carry, and the rows to hand to the sink after it. */
interface CommitTail {
  /** The deferred INSERTs, in enqueue order; COMMIT follows them in the same simple query. */
  inserts: string[]
  sink: CommittedRowSink | undefined
  /** Rows handed over after COMMIT, each with the index of its INSERT in `inserts` (which returns occurred_at). */
  held: { row: DeferredRow; at: number }[]
  /** Outbox rows inserted due at once. */
  due: number
  /** Statements sent after the INSERTs, each with its command and what takes its result after COMMIT. */
  extra: DeferredStatement[]
}

/** A statement `deferToCommit` sends with COMMIT. */
interface DeferredStatement {
  sql: string
  command: string
  onResult: (result: StatementResult) => void
}

/**
 * Sends `sql` (a statement with its values inlined, see sql.ts) in the simple query of a `pgDatabase`
 * transaction's COMMIT, after the outbox INSERTs; once the COMMIT succeeded, `onResult` gets its
 * result (`command` checked). Returns false when `tx` is not such a transaction's client: the
 * caller runs it itself.
 */
export function deferToCommit(
  tx: TransactionClient,
  sql: string,
  command: string,
  onResult: (result: StatementResult) => void,
): boolean {
  const tail = deferredToCommit.get(tx)
  if (!tail) return false
  tail.extra.push({ sql, command, onResult })
  return true
}

/**
 * The pg clients of the `pgDatabase` transactions whose `fn` runs, each with its COMMIT's tail: how
 * `enqueue(tx)` tells such a client from any other (the `Database` contract). Set after BEGIN,
 * removed before COMMIT or on failure. Keyed by pg's own client, so no wrapper sits on the path of
 * each of `fn`'s statements.
 */
const deferredToCommit = new WeakMap<object, CommitTail>()

/**
 * Defers `enqueue`'s INSERT of one outbox row in a `pgDatabase` transaction to its COMMIT's simple
 * query (a failing INSERT fails the COMMIT); while the sink takes rows it is held `holdMs`
 * (`heldOutboxInsert`) and handed over after the COMMIT. False when `tx` is no such client
 * (`deferredToCommit`): the caller inserts at once.
 * @throws SqlValueError for a value with a NUL character (nothing deferred)
 */
export function deferOutboxRow(tx: TransactionClient, row: DeferredRow): boolean {
  const tail = deferredToCommit.get(tx)
  if (!tail) return false
  const values = { ...row, headers_json: JSON.stringify(row.headers) }
  const holdMs = tail.sink?.holdMs()
  if (holdMs === undefined) {
    tail.inserts.push(dueOutboxInsert(values))
    tail.due += 1
    return true
  }
  tail.inserts.push(heldOutboxInsert(values, Math.ceil(holdMs)))
  tail.held.push({ row, at: tail.inserts.length - 1 })
  return true
}

/**
 * Sends COMMIT with the tail's INSERTs in one simple query and checks the answer (`INSERT`s, `COMMIT`).
 * @throws SqlResultError when the COMMIT answered ROLLBACK, and the database's errors
 */
async function commitWithTail(client: pg.PoolClient, tail: CommitTail): Promise<StatementResult[]> {
  const statements = [...tail.inserts, ...tail.extra.map((e) => e.sql), COMMIT]
  const results = (await client.query(statements.join(';\n'))) as StatementResult | StatementResult[]
  const commands = [...tail.inserts.map(() => 'INSERT'), ...tail.extra.map((e) => e.command), COMMIT]
  const checked = expectResults(results, commands, 'pgDatabase transaction')
  tail.extra.forEach((e, i) => e.onResult(checked[tail.inserts.length + i] as StatementResult))
  return checked
}

/** Hands a committed transaction's rows to its sink (`results`: the COMMIT message's, checked). */
function handOver(tail: CommitTail, results: readonly StatementResult[]): void {
  const sink = tail.sink
  if (!sink) return
  if (tail.held.length > 0) {
    const committedAt = performance.now()
    sink.publish(
      tail.held.map(({ row, at }) => ({
        ...row,
        occurred_at: (results[at]?.rows[0] as { occurred_at?: Date } | undefined)?.occurred_at ?? new Date(),
        committedAt,
      })),
    )
  }
  if (tail.due > 0) sink.wake()
}

/**
 * Runs `fn` on a pooled client, which `fn` begins and commits; when `fn` throws, sends ROLLBACK and
 * rethrows. A client whose connection died meanwhile, or whose ROLLBACK failed, is destroyed, not
 * put back in the pool.
 */
export async function withPooledClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  // pg-pool listens for 'error' only on idle clients: without this, a connection dying between two
  // statements would be an uncaught exception (the next statement then fails and rolls back).
  const onError = (error: Error): void => {
    broken = error
  }
  client.on('error', onError)
  try {
    return await fn(client)
  } catch (error) {
    await client.query(ROLLBACK).catch((rollbackError: Error) => {
      broken = rollbackError
    })
    throw error
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}

/**
 * One transaction of `pgDatabase`: `begin` (its results checked against `beginsWith`), `fn` with the
 * client and those results, then COMMIT with the deferred INSERTs; the held rows go to the sink once
 * the client is back in the pool.
 */
async function pgTransaction<T>(
  pool: pg.Pool,
  sink: CommittedRowSink | undefined,
  begin: { text: string; beginsWith: readonly string[] },
  fn: (client: pg.PoolClient, begun: readonly StatementResult[]) => Promise<T>,
): Promise<T> {
  const tail: CommitTail = { inserts: [], sink, held: [], due: 0, extra: [] }
  const { result, committed } = await withPooledClient(pool, async (client) => {
    const begun = (await client.query(begin.text)) as StatementResult | StatementResult[]
    deferredToCommit.set(client, tail)
    let result: T
    try {
      result = await fn(client, expectResults(begun, begin.beginsWith, 'pgDatabase BEGIN'))
    } finally {
      deferredToCommit.delete(client)
    }
    return { result, committed: await commitWithTail(client, tail) }
  })
  handOver(tail, committed)
  return result
}

/** Options of `pgDatabase`. */
export interface PgDatabaseOptions {
  /** Where committed outbox rows go to be published at once; without it the relay claims them. */
  committed?: CommittedRowSink | undefined
}

/**
 * `Database` over a pg Pool: BEGIN on a pooled client, COMMIT when `fn` resolves, ROLLBACK when it
 * throws (the original error is rethrown; see `withPooledClient` for broken clients). A transaction
 * in which a statement failed (its error caught inside `fn`) rejects with `SqlResultError` at
 * COMMIT instead of resolving as if it had written anything.
 *
 * Round trips, the largest per-message cost in a service's profile: `enqueue`'s outbox INSERTs go
 * with COMMIT (`deferOutboxRow`) and `inboxTransaction` sends BEGIN with the inbox INSERT, so a
 * handler transaction costs two besides the handler's own statements, not four;
 * `inboxBatchTransaction` does the same for several deliveries of one queue. With
 * `options.committed` (`createMessaging` passes its relay's), this process publishes the enqueued
 * rows right after the COMMIT (`CommittedRowSink`).
 */
export function pgDatabase(pool: pg.Pool, options: PgDatabaseOptions = {}): Database<pg.PoolClient> {
  const sink = options.committed
  const plainBegin = { text: BEGIN, beginsWith: [BEGIN] }
  return {
    transaction: (fn) => pgTransaction(pool, sink, plainBegin, (client) => fn(client)),
    inboxTransaction: (entry, fn) =>
      pgTransaction(
        pool,
        sink,
        { text: beginWithInboxInsert(entry), beginsWith: BEGIN_WITH_INBOX_RESULTS },
        async (client, [, inserted]) => {
          if (inserted?.rowCount !== 1) return { fresh: false }
          return { fresh: true, value: await fn(client) }
        },
      ),
    beginWith: (first, expect, fn) =>
      pgTransaction(
        pool,
        sink,
        { text: `${BEGIN};\n${first}`, beginsWith: [BEGIN, ...expect] },
        (client, begun) => fn(client, begun.slice(1)),
      ),
    inboxBatchTransaction: (entries, fn) =>
      pgTransaction(
        pool,
        sink,
        { text: beginWithInboxBatchInsert(entries), beginsWith: BEGIN_WITH_INBOX_RESULTS },
        (client, [, inserted]) => {
          const rows = (inserted?.rows ?? []) as Array<{ id: string }>
          return fn(client, new Set(rows.map((row) => row.id)))
        },
      ),
  }
}

/** Whether `tx` is a Prisma client (root or transaction) rather than a pg client. */
function isPrismaClient(tx: TransactionClient): tx is PrismaTransactionLike {
  return typeof (tx as Partial<PrismaTransactionLike>).$executeRawUnsafe === 'function'
}

/**
 * Runs one parameterised statement (`$1`, `$2`, ...) that returns no rows on either transaction
 * kind; resolves with the number of rows it affected. Cast parameters in SQL (`$1::uuid`,
 * `$2::jsonb`): Prisma sends them untyped.
 */
export async function execute(
  tx: TransactionClient,
  sql: string,
  params: unknown[] = [],
): Promise<{ rowCount: number }> {
  if (isPrismaClient(tx)) return { rowCount: await tx.$executeRawUnsafe(sql, ...params) }
  return { rowCount: (await tx.query(sql, params)).rowCount ?? 0 }
}

/**
 * Runs one parameterised statement on either transaction kind and resolves with its rows. Cast
 * parameters in SQL, as for `execute`.
 */
export async function queryRows<R>(tx: TransactionClient, sql: string, params: unknown[] = []): Promise<R[]> {
  if (isPrismaClient(tx)) return tx.$queryRawUnsafe<R[]>(sql, ...params)
  return (await tx.query(sql, params)).rows as R[]
}

type PgClientProbe = PgClientLike & {
  totalCount?: unknown
  getTransactionStatus?: () => string | null
}

/**
 * Refuses with `NotInTransactionError` a root PrismaClient (it has `$connect`, a transaction client
 * does not), a pg Pool (`totalCount`: each query would autocommit) and a pg client outside BEGIN:
 * pg >= 8.12 keeps the server's transaction status ('T' in one, 'E' failed), so the check costs no
 * round trip; older pg pays two for a SAVEPOINT probe (a minimal BEGIN/COMMIT: 0.18 -> 0.53 ms).
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
    await client.query(SAVEPOINT_PROBE)
  } catch {
    throw new NotInTransactionError(`${what} got a pg client outside BEGIN`)
  }
  await client.query(RELEASE_SAVEPOINT_PROBE)
}
