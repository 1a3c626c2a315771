/**
 * What the outbox and relay tests share: a database with the messaging tables, a unique exchange
 * with a tap queue on every key, relays made with quiet test settings, a recording logger, row
 * look-ups, and cleanup of all of it.
 */
import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  uniqueName,
  type TapQueue,
  type TcpProxy,
  type TestDatabase,
} from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { createRelay, type Relay, type RelayOptions } from '../src/outbox/relay.js'
import type { Logger, OutgoingMessage } from '../src/types.js'

export const MESSAGING_SQL = fileURLToPath(new URL('../sql/messaging.sql', import.meta.url))

/** One log line a component wrote. */
export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error'
  obj: object
  msg: string | undefined
}

/** A logger that keeps what it is told (LOG_LEVEL=debug also prints it). */
export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = []
  const print = process.env.LOG_LEVEL === 'debug'
  const at =
    (level: LogEntry['level']) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj, msg })
      if (print) console.log(level, msg, obj)
    }
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** An outbox row as the tests read it back. */
export interface StoredRow {
  id: string
  routing_key: string
  attempts: number
  last_error: string | null
  published_at: Date | null
  failed_at: Date | null
  available_at: Date
}

/** A test message on `routingKey` (default `test.happened`). */
export function message(n: number, routingKey = 'test.happened'): OutgoingMessage<{ n: number }> {
  return {
    type: `${routingKey}.v1`,
    routingKey,
    payload: { n },
    aggregateId: `agg-${n}`,
    correlationId: `corr-${n}`,
  }
}

export interface RelayFixture {
  db: TestDatabase
  exchange: string
  tap: TapQueue
  logger: ReturnType<typeof recordingLogger>
  /** A relay on this database and exchange with fast test settings; stopped by `cleanup`. */
  relay(overrides?: Partial<RelayOptions>): Relay
  /**
   * A `relay(overrides)`, reaching the broker through `via` when given, started, once it has
   * published one warm-up row: its connection and channel are open, so what the test times starts
   * from a running relay.
   */
  publishingRelay(overrides?: Partial<RelayOptions>, via?: TcpProxy): Promise<Relay>
  /** Enqueues messages in one committed transaction; returns their ids. */
  commit(messages: OutgoingMessage[]): Promise<string[]>
  /** Inserts `count` rows straight in SQL (a backlog, fast). */
  backlog(count: number, routingKey?: string): Promise<void>
  row(id: string): Promise<StoredRow>
  rows(): Promise<StoredRow[]>
  /** Polls `check` every 20 ms until it returns true; throws after `timeoutMs`. */
  until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void>
  /**
   * Resolves once the tap has received each of `ids` at least once; throws after 30 s. A relay's
   * 'published' means the broker confirmed the message, not that the tap's consumer has it yet.
   */
  tapped(ids: string[]): Promise<void>
  cleanup(): Promise<void>
}

/** Creates the fixture; call `cleanup()` in afterAll. */
export async function relayFixture(prefix: string): Promise<RelayFixture> {
  const db = await createTestDatabase({ prefix, sqlFiles: [MESSAGING_SQL] })
  const exchange = uniqueName(`${prefix}_ex`)
  const tap = await tapQueue(AMQP_URL, exchange)
  const logger = recordingLogger()
  const relays: Relay[] = []
  const database = pgDatabase(db.pool)

  const fixture: RelayFixture = {
    db,
    exchange,
    tap,
    logger,
    relay(overrides = {}) {
      const relay = createRelay({
        pool: db.pool,
        amqpUrl: AMQP_URL,
        exchange,
        service: 'test',
        logger,
        pollIntervalMs: 200,
        publishTimeoutMs: 2_000,
        backoffBaseMs: 50,
        backoffMaxMs: 400,
        retentionIntervalMs: 0,
        ...overrides,
      })
      relays.push(relay)
      return relay
    },
    async publishingRelay(overrides, via) {
      const relay = fixture.relay(via ? { ...overrides, amqpUrl: via.url(AMQP_URL) } : overrides)
      await relay.start()
      const [warm] = await fixture.commit([message(0)])
      // Woken, so a relay with a long poll interval publishes it too.
      relay.wake()
      await relay.signals.waitFor('published', (s) => s.id === warm, 30_000)
      return relay
    },
    commit: (messages) =>
      database.transaction(async (tx) => Promise.all(messages.map((m) => enqueue(tx, m)))),
    async backlog(count, routingKey = 'test.happened') {
      await db.pool.query(
        `INSERT INTO outbox_message (id, type, routing_key, payload, headers)
         SELECT gen_random_uuid(), $2 || '.v1', $2, jsonb_build_object('n', n), jsonb_build_object('correlationId', 'bulk')
         FROM generate_series(1, $1::int) AS n`,
        [count, routingKey],
      )
    },
    async row(id) {
      const { rows } = await db.pool.query<StoredRow>('SELECT * FROM outbox_message WHERE id = $1', [id])
      if (!rows[0]) throw new Error(`no outbox row ${id}`)
      return rows[0]
    },
    async rows() {
      return (await db.pool.query<StoredRow>('SELECT * FROM outbox_message ORDER BY id')).rows
    },
    tapped(ids) {
      return fixture.until(
        () => {
          const counts = tap.countsById()
          return ids.every((id) => counts.has(id))
        },
        30_000,
        `the tap to receive ${ids.length} message(s)`,
      )
    },
    async until(check, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    async cleanup() {
      await Promise.all(relays.map((relay) => relay.stop()))
      await tap.delete()
      await deleteBrokerObjects({ exchanges: [exchange] })
      await db.drop()
    },
  }
  return fixture
}

/** Counts of each id in `ids`. */
export function countIds(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  return counts
}

/** Pending rows (neither published nor parked). */
export async function pendingCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_message WHERE published_at IS NULL AND failed_at IS NULL',
  )
  return rows[0]?.n ?? 0
}

/**
 * Resolves once `relay` has signalled `published` for every id of `ids` (listening from now on: call
 * it before the publishes can happen). Never rejects; the test's timeout bounds it.
 */
export function publishedAll(relay: Pick<Relay, 'signals'>, ids: readonly string[]): Promise<void> {
  const remaining = new Set(ids)
  return new Promise<void>((resolve) =>
    relay.signals.on('published', (s) => {
      remaining.delete(s.id)
      if (remaining.size === 0) resolve()
    }),
  )
}
