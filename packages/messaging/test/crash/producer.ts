/**
 * The process the crash matrix kills (`test/crash-matrix.int.test.ts`): it enqueues, commits and
 * publishes through the real package on real PostgreSQL and RabbitMQ, and stops at one named point
 * of the publish protocol, where the test kills it (SIGKILL) or stops it (SIGSTOP).
 *
 * Environment: DATABASE_URL, AMQP_URL, EXCHANGE; MODE `commit` (createMessaging with publish on
 * commit, its sweep asleep) or `sweep` (a relay that only sweeps); CRASH_AT, the point (see
 * `CrashPoint`; empty: none); STOP_WITH `freeze` (the whole process blocks at the point, for a
 * SIGKILL) or `sigstop` (it stops itself, and goes on from the point after SIGCONT);
 * PUBLISH_TIMEOUT_MS (default 1,000: the hold is this plus 5 s).
 *
 * Lines out: `ready`; `at <point> <id>` once stopped at the point; `committed <id>`; `published <id>`
 * (the relay's 'published' signal: confirmed, and the mark's statement returned); `failed <id>`
 * ('publishFailed'); `settled mark <id>` / `settled give-back <id>` once the statement that marks the
 * row published, or gives it back to the sweep, returned or failed.
 * Lines in (MODE commit): `commit` commits one row with `messaging.transaction`; `commit-own`
 * begins a transaction on a pool client of its own, where `enqueue` runs its INSERT at once. Either
 * writes a business row beside the outbox row (`crash_order`, the outbox id), in the same transaction.
 *
 * The points are found by wrapping `pg.Client.prototype.query` and amqplib's
 * `ConfirmChannel.prototype.publish`; SQL is matched loosely, by the fragments the protocol needs.
 */
import { writeSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { createMessaging } from '../../src/messaging.js'
import { enqueue } from '../../src/outbox/enqueue.js'
import { createRelay } from '../../src/outbox/relay.js'
import type { Signals } from '../../src/signals.js'
import { crashMessage, type CrashPoint } from './points.js'

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`${name} is required`)
  return value
}

const mode = env('MODE')
const crashAt = env('CRASH_AT', '') as CrashPoint | ''
const stopWith = env('STOP_WITH', 'freeze')
const publishTimeoutMs = Number(env('PUBLISH_TIMEOUT_MS', '1000'))
/** The id whose publish the point is about (set once known: at enqueue, or at the sweep's claim). */
let target: string | undefined
let claimed: () => void = () => undefined
const firstClaim = new Promise<void>((resolve) => (claimed = resolve))

const say = (line: string): void => void writeSync(1, `${line}\n`)

/** Stops the process at `point`: frozen for good (a SIGKILL ends it), or SIGSTOPped until SIGCONT. */
function stopAt(point: CrashPoint, id: string): void {
  say(`at ${point} ${id}`)
  if (stopWith === 'sigstop') {
    process.kill(process.pid, 'SIGSTOP')
    return
  }
  // Blocks the event loop itself: no timer, confirm or retry of the package runs after this point.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown
const originalQuery = Reflect.get(pg.Client.prototype, 'query') as Query
const sqlOf = (arg: unknown): string =>
  typeof arg === 'string' ? arg : ((arg as { text?: string } | null)?.text ?? '')
/** A query's parameter values, whether passed as `query(text, values)` or `query({ text, values })`. */
const valuesOf = (args: unknown[]): unknown[] =>
  Array.isArray(args[1]) ? args[1] : ((args[0] as { values?: unknown[] } | null)?.values ?? [])
/** Whether a statement names the target, in its text (inlined) or among its parameters (`$1::uuid[]`). */
const mentionsTarget = (sql: string, args: unknown[]): boolean =>
  target !== undefined && (sql.includes(target) || JSON.stringify(valuesOf(args)).includes(target))
const CLAIM = /FOR UPDATE SKIP LOCKED/i
const MARK = /published_at\s*=\s*now\(\)/i
const INSERT = /INSERT INTO outbox_message/i
const GIVE_BACK = /SET available_at\s*=\s*now\(\)/i

/** Stops before the statement that marks the target published, or before its COMMIT is sent. */
function beforeQuery(sql: string, args: unknown[]): void {
  if (target === undefined || !mentionsTarget(sql, args)) return
  if ((crashAt === 'after-confirm' || crashAt === 'sweep-after-confirm') && MARK.test(sql))
    stopAt(crashAt, target)
  if (crashAt === 'before-commit' && INSERT.test(sql) && /\bCOMMIT\s*$/i.test(sql)) stopAt(crashAt, target)
}

/**
 * `settled mark <id>` or `settled give-back <id>` for a statement that marks the target published
 * or gives it back to the sweep, printed once it returned or failed: the round that took the target
 * is over.
 */
function settledLine(sql: string, args: unknown[]): string | undefined {
  if (target === undefined || !mentionsTarget(sql, args)) return undefined
  if (MARK.test(sql)) return `settled mark ${target}`
  if (GIVE_BACK.test(sql)) return `settled give-back ${target}`
  return undefined
}

/** After the sweep's claim returned rows: the relay holds their locks now. */
function afterClaim(result: unknown): unknown {
  claimed()
  const results = Array.isArray(result) ? (result as pg.QueryResult[]) : [result as pg.QueryResult]
  const row = results.at(-1)?.rows[0] as { id?: string } | undefined
  if (mode === 'sweep' && row?.id) {
    target = row.id
    if (crashAt === 'sweep-after-claim') stopAt(crashAt, row.id)
  }
  return result
}

pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
  const sql = sqlOf(args[0])
  beforeQuery(sql, args)
  const settled = settledLine(sql, args)
  const callback = args.at(-1)
  if (settled !== undefined && typeof callback === 'function')
    args[args.length - 1] = (...outcome: unknown[]): unknown => {
      say(settled)
      return (callback as (...outcome: unknown[]) => unknown)(...outcome)
    }
  const result = originalQuery.apply(this, args)
  if (settled !== undefined && result instanceof Promise)
    result.then(
      () => say(settled),
      () => say(settled),
    )
  return CLAIM.test(sql) && result instanceof Promise ? result.then(afterClaim) : result
} as unknown as typeof pg.Client.prototype.query

// amqplib's package exports hide lib/; the file required by its path is the module amqplib runs.
const require = createRequire(import.meta.url)
const channelModel = require(join(dirname(require.resolve('amqplib')), 'lib', 'channel_model.js')) as {
  ConfirmChannel: { prototype: { publish: (...args: unknown[]) => boolean } }
}
const originalPublish = channelModel.ConfirmChannel.prototype.publish
channelModel.ConfirmChannel.prototype.publish = function (this: unknown, ...args: unknown[]): boolean {
  const messageId = (args[3] as { messageId?: string } | undefined)?.messageId
  if (crashAt === 'after-commit' && messageId !== undefined && messageId === target)
    stopAt(crashAt, messageId)
  return originalPublish.apply(this, args)
}

const pool = new pg.Pool({
  connectionString: env('DATABASE_URL'),
  max: 4,
  application_name: 'crash-producer',
})
pool.on('error', () => undefined)
const relaySettings = { publishTimeoutMs, retentionIntervalMs: 0, statsIntervalMs: 600_000 }

/** Prints `published <id>` for every row this process marked, `failed <id>` for one it gave back. */
const reportPublished = (signals: Signals): void => {
  signals.on('published', (signal) => say(`published ${signal.id}`))
  signals.on('publishFailed', (signal) => say(`failed ${signal.id}`))
}

if (mode === 'sweep') {
  const relay = createRelay({
    pool,
    amqpUrl: env('AMQP_URL'),
    exchange: env('EXCHANGE'),
    service: 'crash-sweeper',
    ...relaySettings,
    pollIntervalMs: 50,
    publishOnCommit: false,
    wakeup: { listen: false, notify: false },
  })
  reportPublished(relay.signals)
  await relay.start()
  // The loop opens its channel (and declares the exchange) before it claims.
  await firstClaim
  say('ready')
} else {
  const messaging = createMessaging({
    service: 'crash-committer',
    pool,
    amqpUrl: env('AMQP_URL'),
    exchange: env('EXCHANGE'),
    // Its own sweep sleeps: what it leaves is swept by another relay, as after a crash.
    relay: { ...relaySettings, pollIntervalMs: 600_000, wakeup: { listen: false } },
  })
  reportPublished(messaging.signals)
  await messaging.start()
  // One row published on commit first, so the commit publisher's confirm channel is open.
  const warm = await messaging.transaction((tx) => enqueue(tx, crashMessage(0)))
  await messaging.signals.waitFor('published', (signal) => signal.id === warm, 30_000)
  say('ready')
  let n = 0
  for await (const line of createInterface({ input: process.stdin })) {
    n += 1
    if (line === 'commit') {
      const id = await messaging.transaction(async (tx) => {
        target = await enqueue(tx, crashMessage(n))
        await tx.query('INSERT INTO crash_order (outbox_id) VALUES ($1)', [target])
        return target
      })
      say(`committed ${id}`)
    } else if (line === 'commit-own') {
      // enqueue on a transaction the caller began: its INSERT runs at once, inside the transaction.
      const client = await pool.connect()
      await client.query('BEGIN')
      target = await enqueue(client, crashMessage(n))
      await client.query('INSERT INTO crash_order (outbox_id) VALUES ($1)', [target])
      if (crashAt === 'after-insert') stopAt(crashAt, target)
    }
  }
}
