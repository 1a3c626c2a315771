import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  uniqueName,
  useFixture,
  type TapQueue,
  type TcpProxy,
  type TestDatabase,
} from '@saga/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMessaging } from '../src/messaging.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { createRelay, type Relay } from '../src/outbox/relay.js'
import { brokerProxy } from './broker-proxy.js'
import { MESSAGING_SQL, recordingLogger, type StoredRow } from './relay-fixture.js'

// Publish on commit: the committing process publishes its rows itself, and the relay's sweep is
// the safety net. At least once must hold if that process dies at any point after the COMMIT:
// before the publish reached the broker, and after the broker confirmed but before the mark.

const COMMITTER = fileURLToPath(new URL('./crash/committer.ts', import.meta.url))

interface Committer {
  proc: ChildProcessWithoutNullStreams
  /** Commits one row in the child; resolves with its id once the COMMIT returned there. */
  commit(): Promise<string>
  kill(): Promise<void>
}

/** Starts the committing child process on `db` and `exchange`, reaching the broker at `amqpUrl`. */
async function startCommitter(db: TestDatabase, exchange: string, amqpUrl: string): Promise<Committer> {
  const proc = spawn(process.execPath, ['--import', 'tsx', COMMITTER], {
    env: { ...process.env, DATABASE_URL: db.url, AMQP_URL: amqpUrl, EXCHANGE: exchange },
  })
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const lines: string[] = []
  const waiters: ((line: string) => void)[] = []
  let buffered = ''
  proc.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      const waiter = waiters.shift()
      if (waiter) waiter(line)
      else lines.push(line)
    }
  })
  const nextLine = (what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const early = lines.shift()
      if (early !== undefined) return resolve(early)
      const timer = setTimeout(
        () => reject(new Error(`committer: no ${what} in 20 s; stderr: ${stderr}`)),
        20_000,
      )
      waiters.push((line) => {
        clearTimeout(timer)
        resolve(line)
      })
    })
  expect(await nextLine('ready')).toBe('ready')
  return {
    proc,
    commit() {
      proc.stdin.write('commit\n')
      return nextLine('committed id')
    },
    kill: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
        proc.once('exit', () => resolve())
        proc.kill('SIGKILL')
      }),
  }
}

const row = async (pool: pg.Pool, id: string) => {
  const { rows } = await pool.query<StoredRow & { held_ms: number }>(
    `SELECT *, (extract(epoch FROM available_at - occurred_at) * 1000)::float8 AS held_ms
     FROM outbox_message WHERE id = $1`,
    [id],
  )
  if (!rows[0]) throw new Error(`no outbox row ${id}`)
  return rows[0]
}

describe('publish on commit', () => {
  const db = useFixture(() => createTestDatabase({ prefix: 'commit_pub', sqlFiles: [MESSAGING_SQL] }))
  let exchange: string
  let tap: TapQueue
  const relays: Relay[] = []
  let committer: Committer | undefined

  beforeAll(async () => {
    exchange = uniqueName('commit_pub_ex')
    tap = await tapQueue(AMQP_URL, exchange)
  })

  afterEach(async () => {
    await committer?.kill()
    committer = undefined
    await Promise.all(relays.splice(0).map((relay) => relay.stop()))
  })

  afterAll(async () => {
    await tap.delete()
    await deleteBrokerObjects({ exchanges: [exchange] })
  })

  /** A relay that only sweeps: what another instance, or this one restarted, runs. */
  const sweeper = async (): Promise<Relay> => {
    const relay = createRelay({
      pool: db.pool,
      amqpUrl: AMQP_URL,
      exchange,
      service: 'sweeper',
      pollIntervalMs: 100,
      retentionIntervalMs: 0,
      publishOnCommit: false,
    })
    relays.push(relay)
    await relay.start()
    return relay
  }

  it('when a transaction commits a row, then this process publishes and marks it at once, while the sweep would wait out the hold', async () => {
    const logger = recordingLogger()
    const messaging = createMessaging({
      service: 'committer',
      pool: db.pool,
      amqpUrl: AMQP_URL,
      exchange,
      logger,
      relay: { publishTimeoutMs: 2_000, pollIntervalMs: 600_000, retentionIntervalMs: 0 },
    })
    await messaging.start()
    try {
      const published = new Set<string>()
      messaging.signals.on('published', (signal) => published.add(signal.id))
      const ids = await messaging.transaction(async (tx) =>
        Promise.all(
          [1, 2, 3].map((n) =>
            enqueue(tx, {
              type: 'commit.published.v1',
              routingKey: 'commit.published',
              payload: { n, text: 'ünïcode "quoted"' },
              aggregateId: `agg-${n}`,
              correlationId: `corr-${n}`,
            }),
          ),
        ),
      )
      const got = await tap.waitForCount(3, 30_000)
      expect(got.map((m) => m.properties.messageId as string)).toEqual(ids)
      expect(got.map((m) => (m.body as { data: unknown }).data)).toEqual(
        [1, 2, 3].map((n) => ({ n, text: 'ünïcode "quoted"' })),
      )
      // 'published' is signalled once the mark committed, after the broker has delivered the copies.
      for (let tries = 0; published.size < ids.length && tries < 1_500; tries += 1)
        await new Promise((resolve) => setTimeout(resolve, 20))
      for (const id of ids) {
        const stored = await row(db.pool, id)
        // Held for the publish timeout and 5 s: only this process could have published it by now.
        expect(stored.held_ms).toBeGreaterThanOrEqual(6_900)
        expect(stored.published_at).not.toBeNull()
      }
      expect([...published]).toEqual(ids)
      expect(messaging.stats().relay.publishedTotal).toBe(3)
    } finally {
      await messaging.stop()
    }
  })

  it('when a row is made due again between its confirm and the mark, then the mark leaves it to the relay, which publishes it again', async () => {
    const messaging = createMessaging({
      service: 'committer',
      pool: db.pool,
      amqpUrl: AMQP_URL,
      exchange,
      relay: { publishTimeoutMs: 2_000, pollIntervalMs: 600_000, retentionIntervalMs: 0 },
    })
    await messaging.start()
    // Past the relay's first sweep after it connected: from here it sweeps only when woken, so the
    // reset row below waits for the mark and then the sweeper, not for a sweep that happened to run.
    await new Promise((resolve) => setTimeout(resolve, 500))
    try {
      // The confirmed rows are marked up to 100 ms after the confirm. An operator's republish inside
      // that window must win: the test takes the table lock first, so the mark waits behind the reset.
      let id: string | undefined
      for (let attempt = 0; id === undefined && attempt < 5; attempt += 1) {
        const candidate = await messaging.transaction((tx) =>
          enqueue(tx, {
            type: 'commit.republished.v1',
            routingKey: 'commit.republished',
            payload: { attempt },
            aggregateId: 'agg-republished',
            correlationId: 'corr-republished',
          }),
        )
        const marked = messaging.signals.waitFor('published', (s) => s.id === candidate, 30_000)
        await tap.waitFor((m) => m.properties.messageId === candidate, 30_000, 'the published row')
        const client = await db.pool.connect()
        try {
          await client.query('BEGIN; LOCK TABLE outbox_message IN EXCLUSIVE MODE')
          const { rowCount } = await client.query(
            `UPDATE outbox_message SET published_at = NULL, available_at = now()
             WHERE id = $1 AND published_at IS NULL`,
            [candidate],
          )
          await client.query('COMMIT')
          if (rowCount === 1) id = candidate
        } finally {
          client.release()
        }
        // 'published' is signalled once the mark's statement returned.
        await marked
      }
      if (id === undefined) throw new Error('the mark came first in five attempts')

      // Had the mark taken the reset row, it would stay marked and no sweep would publish it again.
      const republished = id
      await sweeper()
      await tap.waitFor(() => tap.countsById().get(republished) === 2, 30_000, 'the row published again')
      for (
        let tries = 0;
        (await row(db.pool, republished)).published_at === null && tries < 1_500;
        tries += 1
      )
        await new Promise((resolve) => setTimeout(resolve, 20))
      expect((await row(db.pool, republished)).published_at).not.toBeNull()
    } finally {
      await messaging.stop()
    }
  })

  it('when the committing process dies after the COMMIT, before its publish reached the broker, then the sweep publishes the row once the hold has passed', async () => {
    const proxy: TcpProxy = await brokerProxy()
    try {
      committer = await startCommitter(db, exchange, proxy.url(AMQP_URL))
      // The link stays open but carries nothing: the child publishes into it and waits for a confirm.
      proxy.silence()
      const id = await committer.commit()
      await committer.kill()
      const before = await row(db.pool, id)
      expect({ published: before.published_at, held: before.held_ms >= 5_900 }).toEqual({
        published: null,
        held: true,
      })
      expect(tap.countsById().get(id)).toBeUndefined()

      const relay = await sweeper()
      // 'published' is signalled once the sweep's mark committed, after the broker has the copy.
      await relay.signals.waitFor('published', (s) => s.id === id, 30_000)
      await tap.waitFor((m) => m.properties.messageId === id, 30_000, 'the swept row')
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(tap.countsById().get(id)).toBe(1)
      expect((await row(db.pool, id)).published_at).not.toBeNull()
    } finally {
      await proxy.close()
    }
  })

  it('when the committing process dies after the broker confirmed, before the mark, then the sweep publishes the row again with the same message id', async () => {
    // The mark waits here, so the process can be killed between the confirm and the mark.
    await db.pool.query(`
      CREATE FUNCTION hold_mark() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.published_at IS NOT NULL AND OLD.published_at IS NULL THEN PERFORM pg_sleep(60); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER hold_mark BEFORE UPDATE ON outbox_message FOR EACH ROW EXECUTE FUNCTION hold_mark()`)
    committer = await startCommitter(db, exchange, AMQP_URL)
    const id = await committer.commit()
    await tap.waitFor((m) => m.properties.messageId === id, 30_000, 'the published row')
    let sleeping: number | undefined
    for (let tries = 0; sleeping === undefined && tries < 1_200; tries += 1) {
      const { rows } = await db.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'`,
      )
      sleeping = rows[0]?.pid
      if (sleeping === undefined) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(sleeping).toBeDefined()
    await committer.kill()
    // The killed client's backend would sleep on; ending it rolls the mark back.
    await db.pool.query('SELECT pg_terminate_backend($1)', [sleeping])
    await db.pool.query('DROP TRIGGER hold_mark ON outbox_message; DROP FUNCTION hold_mark()')
    expect((await row(db.pool, id)).published_at).toBeNull()

    const relay = await sweeper()
    // 'published' is signalled once the sweep's mark committed, after the broker has the copy.
    await relay.signals.waitFor('published', (s) => s.id === id, 30_000)
    await tap.waitFor(() => tap.countsById().get(id) === 2, 30_000, 'the row published again')
    const copies = tap.messages.filter((m) => m.properties.messageId === id)
    expect(copies.map((m) => (m.body as { id: string }).id)).toEqual([id, id])
    expect((await row(db.pool, id)).published_at).not.toBeNull()
  })
})
