/**
 * The crash matrix's fixture (`test/crash-matrix.int.test.ts`): one database with the messaging
 * tables and the inbox fixture's `effect` table, one exchange, an inbox consumer in this process that
 * counts each message's deliveries, the producer child, a broker proxy, rescuing relays, and the
 * checks every case ends with.
 */
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  eventually,
  uniqueName,
  type TcpProxy,
  type TestDatabase,
} from '@saga/testkit'
import { expect } from 'vitest'
import { pgDatabase } from '../../src/database.js'
import { createMessaging, type Messaging } from '../../src/messaging.js'
import { enqueue } from '../../src/outbox/enqueue.js'
import { createRelay, type Relay } from '../../src/outbox/relay.js'
import { deadLetterQueueName, queueName } from '../../src/topology.js'
import { brokerProxy } from '../broker-proxy.js'
import { recordingHandler } from '../inbox-fixture.js'
import { MESSAGING_SQL } from '../relay-fixture.js'
import { crashMessage } from './points.js'
import { startProducer, type ProducerProcess, type ProducerSettings } from './producer-process.js'

const HANDLER = 'record-crash'
/** The hold of a row handed over at commit, and the sweep's guard, in the child: 1 s + 5 s, ms. */
export const CHILD_HOLD_MS = 6_000

/** Deliveries of one message at the inbox: run by the handler, or absorbed as a duplicate. */
export interface Seen {
  handled: number
  duplicate: number
}

/** An outbox row as the matrix reads it: `held` while `available_at` is the commit's hold ahead. */
export interface MatrixRow {
  published_at: Date | null
  held: boolean
  due: boolean
}

/** Creates the fixture, its inbox consumer started; `cleanup()` removes all of it. */
export async function crashMatrix(): Promise<CrashMatrix> {
  const db = await createTestDatabase({ prefix: 'crash_matrix', sqlFiles: [MESSAGING_SQL] })
  await db.pool.query(
    `CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer, attempt integer);
     CREATE TABLE crash_order (outbox_id uuid PRIMARY KEY)`,
  )
  const matrix = new CrashMatrix(db, uniqueName('crash_matrix_ex'), uniqueName('crash_matrix'))
  await matrix.inbox.start()
  return matrix
}

/** See `crashMatrix`. */
export class CrashMatrix {
  readonly inbox: Messaging
  readonly #seen = new Map<string, Seen>()
  readonly #relays: Relay[] = []
  #producer: ProducerProcess | undefined
  #proxy: TcpProxy | undefined

  constructor(
    readonly db: TestDatabase,
    readonly exchange: string,
    readonly queuePrefix: string,
  ) {
    this.inbox = createMessaging({
      service: 'crash-inbox',
      pool: db.pool,
      amqpUrl: AMQP_URL,
      exchange,
      queuePrefix,
      handlers: [recordingHandler(HANDLER)],
      relay: { enabled: false },
    })
    this.inbox.signals.on('handled', (signal) => this.#count(signal.id, 'handled'))
    this.inbox.signals.on('duplicate', (signal) => this.#count(signal.id, 'duplicate'))
  }

  #count(id: string, what: keyof Seen): void {
    const entry = this.seen(id)
    entry[what] += 1
    this.#seen.set(id, entry)
  }

  /** The deliveries of `id` so far. */
  seen(id: string): Seen {
    return { ...(this.#seen.get(id) ?? { handled: 0, duplicate: 0 }) }
  }

  /** A broker proxy the next `start` connects the child through. */
  async useProxy(): Promise<TcpProxy> {
    this.#proxy = await brokerProxy()
    return this.#proxy
  }

  /** Starts the producer child on this database and exchange (through the proxy, when there is one). */
  async start(
    settings: Omit<ProducerSettings, 'databaseUrl' | 'amqpUrl' | 'exchange'>,
  ): Promise<ProducerProcess> {
    const amqpUrl = this.#proxy ? this.#proxy.url(AMQP_URL) : AMQP_URL
    this.#producer = await startProducer({
      ...settings,
      databaseUrl: this.db.url,
      amqpUrl,
      exchange: this.exchange,
    })
    return this.#producer
  }

  /** The relay of another instance, started: sweeps every due row, publishes nothing on commit. */
  async rescuer(): Promise<Relay> {
    const relay = createRelay({
      pool: this.db.pool,
      amqpUrl: AMQP_URL,
      exchange: this.exchange,
      service: 'crash-rescuer',
      pollIntervalMs: 100,
      publishTimeoutMs: 2_000,
      retentionIntervalMs: 0,
      publishOnCommit: false,
    })
    this.#relays.push(relay)
    await relay.start()
    return relay
  }

  /** Commits one row due at once from this process, in a transaction no relay saw commit. */
  commitDue(n: number): Promise<string> {
    return pgDatabase(this.db.pool).transaction((tx) => enqueue(tx, crashMessage(n)))
  }

  /** Resolves once the inbox handled `id`. */
  handled(id: string): Promise<void> {
    return eventually(`${id} handled`, () => this.seen(id).handled >= 1)
  }

  /** Resolves once the inbox absorbed a second copy of `id`. */
  duplicated(id: string): Promise<void> {
    return eventually(`${id} again, as a duplicate`, () => this.seen(id).duplicate >= 1)
  }

  async row(id: string): Promise<MatrixRow | undefined> {
    const { rows } = await this.db.pool.query<MatrixRow>(
      `SELECT published_at, available_at >= occurred_at + interval '${CHILD_HOLD_MS - 100} milliseconds' AS held,
              available_at <= now() AS due
         FROM outbox_message WHERE id = $1`,
      [id],
    )
    return rows[0]
  }

  /** True while another transaction holds the row's lock (the sweep that claimed it). */
  async locked(id: string): Promise<boolean> {
    const client = await this.db.pool.connect()
    try {
      await client.query('BEGIN')
      const { rowCount } = await client.query(
        'SELECT id FROM outbox_message WHERE id = $1 FOR UPDATE SKIP LOCKED',
        [id],
      )
      return rowCount === 0 && (await this.row(id)) !== undefined
    } finally {
      await client.query('ROLLBACK')
      client.release()
    }
  }

  /** Handled once (one effect, one inbox row), `copies` deliveries in all, and marked published. */
  async expectHandledOnce(id: string, copies: number): Promise<void> {
    const effects = await this.db.pool.query('SELECT 1 FROM effect WHERE message_id = $1', [id])
    const inboxRows = await this.db.pool.query('SELECT 1 FROM inbox_message WHERE message_id = $1', [id])
    expect({
      seen: this.seen(id),
      effects: effects.rowCount,
      inbox: inboxRows.rowCount,
      published: (await this.row(id))?.published_at instanceof Date,
    }).toEqual({ seen: { handled: 1, duplicate: copies - 1 }, effects: 1, inbox: 1, published: true })
  }

  /**
   * Once the killed child's sessions are gone (the server rolled back what they had open): neither
   * the outbox row nor the business row exists, nothing was delivered, nothing is left to sweep.
   */
  async expectNothingCommitted(id: string): Promise<void> {
    await eventually('the killed producer has no session left', async () => {
      const { rows } = await this.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'crash-producer'`,
      )
      return rows[0]?.n === 0
    })
    const order = await this.db.pool.query('SELECT 1 FROM crash_order WHERE outbox_id = $1', [id])
    const pending = await this.db.pool.query('SELECT 1 FROM outbox_message WHERE published_at IS NULL')
    expect({
      row: await this.row(id),
      order: order.rowCount,
      pending: pending.rowCount,
      seen: this.seen(id),
    }).toEqual({ row: undefined, order: 0, pending: 0, seen: { handled: 0, duplicate: 0 } })
  }

  /** After each case: the child killed (stopped or not), the rescuers stopped, the proxy closed. */
  async reset(): Promise<void> {
    await this.#producer?.kill()
    this.#producer = undefined
    await Promise.all(this.#relays.splice(0).map((relay) => relay.stop()))
    await this.#proxy?.close()
    this.#proxy = undefined
  }

  async cleanup(): Promise<void> {
    await this.reset()
    await this.inbox.stop()
    const queue = queueName(this.queuePrefix, HANDLER)
    await deleteBrokerObjects({ exchanges: [this.exchange], queues: [queue, deadLetterQueueName(queue)] })
    await this.db.drop()
  }
}
