import { describe, expect, it } from 'vitest'
import pg from 'pg'
import { TcpProxy, useFixture } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { createSignals, type Signals } from '../src/signals.js'
import { deadLetterQueueName } from '../src/topology.js'
import { collect, createInboxFixture, envelope, eventually, recordingHandler } from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('consumer'))

/** Holds handlers until opened; counts how many wait at once. */
function turnstile(): {
  wait: () => Promise<void>
  open: () => void
  waiting: () => number
  most: () => number
} {
  let open = (): void => undefined
  const opened = new Promise<void>((resolve) => (open = resolve))
  let waiting = 0
  let most = 0
  return {
    async wait() {
      waiting += 1
      most = Math.max(most, waiting)
      await opened
      waiting -= 1
    },
    open,
    waiting: () => waiting,
    most: () => most,
  }
}

const silent = { debug() {}, info() {}, warn() {}, error() {} }

const distinctIds = (rows: Array<{ message_id: string }>): number =>
  new Set(rows.map((row) => row.message_id)).size

/**
 * Starts a fresh consumer of `handler`'s queue and expects each of the `count` messages there to
 * take effect once, none of them seen as a duplicate. Its signals exist before it starts, since
 * the queued messages may be handled at once.
 */
async function expectEachOnceOnRestart(handler: string, count: number, what: string): Promise<void> {
  const signals = createSignals()
  const duplicates = collect(signals, 'duplicate')
  await fixture.startConsumer([recordingHandler(handler)], { signals })
  await eventually(what, async () => (await fixture.effects(handler)).length === count)
  expect(distinctIds(await fixture.effects(handler))).toBe(count)
  expect(duplicates).toEqual([])
}

/** Publishes a fresh message and expects it handled, and in effect once, by `handler`. */
async function expectNewMessageInEffect(signals: Signals, handler: string): Promise<void> {
  const message = envelope()
  const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)
  await fixture.publish(message)
  await handled
  expect(await fixture.effects(handler)).toHaveLength(1)
}

describe('consumer isolation and flow control', () => {
  it('when one handler keeps failing, then the other handlers keep handling', async () => {
    const broken = recordingHandler('broken', () => Promise.reject(new Error('always')))
    const healthy = recordingHandler('healthy')
    const { signals, consumer } = await fixture.startConsumer([broken, healthy], { maxAttempts: 50 })
    const retrying = collect(signals, 'retrying')
    const handled = collect(signals, 'handled')

    for (let n = 0; n < 5; n += 1) await fixture.publish(envelope({ data: { n } }))

    await eventually('the healthy handler handled all five', () => handled.length === 5)
    // The broken handler's first failures may come after the healthy handler is done.
    await eventually(
      'the broken handler retrying all five',
      () => new Set(retrying.map((s) => s.id)).size === 5,
    )
    expect(handled.every((s) => s.handler === 'healthy')).toBe(true)
    expect(retrying.every((s) => s.handler === 'broken')).toBe(true)
    expect(consumer.health().handlers.broken).toMatchObject({ consuming: true, inFlight: 5 })
    // Deliveries within the prefetch window run concurrently, so their commit order is not fixed.
    expect((await fixture.effects('healthy')).map((row) => row.n).sort()).toEqual([0, 1, 2, 3, 4])
    expect(await fixture.effects('broken')).toEqual([])
    await consumer.stop()
  })

  it('when the prefetch is 3, then no more than 3 deliveries of a handler run at once', async () => {
    const held = turnstile()
    const { consumer } = await fixture.startConsumer([recordingHandler('bounded', held.wait)], {
      prefetch: 3,
    })

    for (let n = 0; n < 8; n += 1) await fixture.publish(envelope({ data: { n } }))

    await eventually('three handlers waiting', () => held.waiting() === 3)
    expect(await fixture.ready(fixture.queue('bounded'))).toBe(5)
    held.open()
    // The consumer's own count, not the effect rows: a COMMIT is visible to another connection before
    // the consumer has its reply and counts the delivery handled (failed once in CI that way).
    await eventually('all eight handled and none in flight', () => {
      const bounded = consumer.metrics().byHandler.bounded
      return bounded?.handledTotal === 8 && bounded.inFlight === 0
    })
    expect(held.most()).toBe(3)
    expect(await fixture.effects('bounded')).toHaveLength(8)
  })
})

describe('consumer dead-lettering', () => {
  it('when the dead-letter queue was deleted, then it is declared again and the poison still lands in it', async () => {
    const { signals } = await fixture.startConsumer([recordingHandler('dlq-gone')])
    await fixture.deleteQueue(deadLetterQueueName(fixture.queue('dlq-gone')))
    const poison = envelope({ data: { n: 'not a number' } })
    const deadLettered = signals.waitFor('deadLettered', (s) => s.id === poison.id, 30_000)

    await fixture.publish(poison)

    expect((await deadLettered).reason).toBe('invalid payload: n: expected a number')
    const copies = await fixture.drainDeadLetters('dlq-gone')
    expect(copies.map((copy) => copy.properties.messageId as unknown)).toEqual([poison.id])
    expect(await fixture.ready(fixture.queue('dlq-gone'))).toBe(0)
  })
})

describe('consumer and a deleted queue', () => {
  it('when the handler queue is deleted while consuming, then it is declared again and consuming resumes', async () => {
    const said: string[] = []
    const logger = { ...silent, warn: (_: object, msg?: string) => void said.push(msg ?? '') }
    const { consumer, signals } = await fixture.startConsumer([recordingHandler('queue-gone')], { logger })

    await fixture.deleteQueue(fixture.queue('queue-gone'))
    await eventually('the broker cancelled the consumer', () =>
      said.includes('consumer cancelled by the broker'),
    )
    await eventually('consuming the redeclared queue', () => consumer.health().consuming)
    await expectNewMessageInEffect(signals, 'queue-gone')
  })
})

describe('consumer and the database', () => {
  it('when the database is unreachable, then deliveries wait for it without using attempts and are handled after', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', Number(new URL(fixture.db.url).port || 5432))
    const pool = new pg.Pool({ connectionString: proxy.url(fixture.db.url), max: 3 })
    pool.on('error', () => undefined)
    const outages: unknown[] = []
    const logger = {
      ...silent,
      warn(obj: object, msg?: string) {
        if (msg?.includes('before the handler ran')) outages.push(obj)
      },
    }
    const { signals } = await fixture.startConsumer([recordingHandler('db-outage')], {
      database: pgDatabase(pool),
      maxAttempts: 2,
      logger,
    })
    const deadLettered = collect(signals, 'deadLettered')
    proxy.cut()
    const message = envelope()
    const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)
    await eventually('several failed inbox transactions', () => outages.length >= 4)
    proxy.restore()

    await handled
    expect(deadLettered).toEqual([])
    expect(await fixture.effects('db-outage')).toEqual([
      { message_id: message.id, handler: 'db-outage', n: 1, attempt: 1 },
    ])
    await pool.end()
    await proxy.close()
  })
})

describe('consumer and transient database failures inside the handler', () => {
  it('when the handler transaction loses its session three times (terminated by an administrator), then it is retried without spending attempts and takes effect once, at attempt 1', async () => {
    const pool = new pg.Pool({ connectionString: fixture.db.url, max: 3 })
    pool.on('error', () => undefined)
    let kills = 0
    // The handler's own session is terminated mid-transaction, as pg_terminate_backend by an
    // operator or a failover would: the statement fails with 57P01 or a lost connection.
    const handler = recordingHandler('session-killed', async (_message, tx) => {
      if (kills >= 3) return
      kills += 1
      await tx.query('SELECT pg_terminate_backend(pg_backend_pid())')
    })
    const { signals, consumer } = await fixture.startConsumer([handler], {
      database: pgDatabase(pool),
      maxAttempts: 2,
      logger: silent,
    })
    const retrying = collect(signals, 'retrying')
    const deadLettered = collect(signals, 'deadLettered')
    const message = envelope()
    const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)
    await handled

    expect(kills).toBe(3)
    expect(deadLettered).toEqual([])
    // Every retry was transient and kept attempt 1: maxAttempts 2 would have dead-lettered it otherwise.
    expect(retrying.map((r) => [r.transient, r.attempt])).toEqual([
      [true, 1],
      [true, 1],
      [true, 1],
    ])
    expect(await fixture.effects('session-killed')).toEqual([
      { message_id: message.id, handler: 'session-killed', n: 1, attempt: 1 },
    ])
    expect(consumer.metrics().byHandler['session-killed']).toMatchObject({
      transientRetriedTotal: 3,
      retriedTotal: 0,
      handledTotal: 1,
    })
    await pool.end()
  })

  it('when a handler keeps failing transiently past transientRetryMaxMs (a deadlock every time), then its failures count as attempts and it is dead-lettered', async () => {
    const handler = recordingHandler('always-deadlocked', () => {
      throw Object.assign(new Error('deadlock detected'), { code: '40P01' })
    })
    const { signals } = await fixture.startConsumer([handler], {
      maxAttempts: 2,
      transientRetryMaxMs: 300,
      logger: silent,
    })
    const retrying = collect(signals, 'retrying')
    const message = envelope()
    const deadLettered = signals.waitFor('deadLettered', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)

    expect((await deadLettered).reason).toBe('handler failed after 2 attempts: deadlock detected')
    expect(retrying.some((r) => r.transient === true)).toBe(true)
    expect(retrying.filter((r) => r.transient !== true).map((r) => r.attempt)).toEqual([1])
  })
})

describe('consumer shutdown and restart', () => {
  it('when stopped while handlers run, then they commit and ack, and deliveries not started stay queued', async () => {
    const held = turnstile()
    const first = await fixture.startConsumer([recordingHandler('draining', held.wait)], { prefetch: 3 })
    for (let n = 0; n < 6; n += 1) await fixture.publish(envelope({ data: { n } }))
    await eventually('three handlers running', () => held.waiting() === 3)

    let stopped = false
    const stopping = first.consumer.stop().then(() => (stopped = true))
    await eventually('the consumer cancelled', () => !first.consumer.health().consuming)
    expect(stopped).toBe(false)
    held.open()
    await stopping
    await first.connection.close()

    expect(await fixture.effects('draining')).toHaveLength(3)
    await eventually(
      'the three not started back in the queue',
      async () => (await fixture.ready(fixture.queue('draining'))) === 3,
    )
    expect(first.connection.isConnected).toBe(false)

    await expectEachOnceOnRestart('draining', 6, 'all six handled')
  })

  it('when stopped during a retry wait, then it stops at once and the next delivery continues the attempt count', async () => {
    // A retry wait and a drain bound of 10 minutes: a stop that waited for either would take
    // minutes, not STOP_WITHIN_MS (generous, for a loaded machine).
    const WAIT_MS = 600_000
    const STOP_WITHIN_MS = 30_000
    const failing = recordingHandler('waiting-retry', () => Promise.reject(new Error('not yet')))
    const first = await fixture.startConsumer([failing], {
      retryBaseMs: WAIT_MS,
      retryMaxMs: WAIT_MS,
      drainTimeoutMs: WAIT_MS,
    })
    const message = envelope()
    const retrying = first.signals.waitFor('retrying', (s) => s.id === message.id, 30_000)
    await fixture.publish(message)
    await retrying

    const before = performance.now()
    await first.consumer.stop()
    await first.connection.close()
    expect(performance.now() - before).toBeLessThan(STOP_WITHIN_MS)
    // The quorum queue takes the returned delivery back through its log: it shows up soon, not at once.
    await eventually(
      'the delivery back in the queue',
      async () => (await fixture.ready(fixture.queue('waiting-retry'))) === 1,
    )

    const signals = createSignals()
    const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)
    await fixture.startConsumer([recordingHandler('waiting-retry')], { signals })
    await handled
    // The quorum queue counted the returned delivery (x-delivery-count), so this is attempt 2.
    expect(await fixture.effects('waiting-retry')).toEqual([
      { message_id: message.id, handler: 'waiting-retry', n: 1, attempt: 2 },
    ])
  })

  it('when a consumer process dies with messages in flight, then none is lost and each takes effect once', async () => {
    const held = turnstile()
    let dead = false
    const dying = recordingHandler('crash', async () => {
      await held.wait()
      // What a killed process does to its open transactions: they never commit.
      if (dead) throw new Error('process died')
    })
    const doomed = await fixture.startConsumer([dying], { prefetch: 3 })
    for (let n = 0; n < 5; n += 1) await fixture.publish(envelope({ data: { n } }))
    await eventually('three deliveries in flight', () => held.waiting() === 3)

    dead = true
    await doomed.connection.close()
    held.open()
    await doomed.consumer.stop()
    expect(await fixture.effects('crash')).toEqual([])

    await expectEachOnceOnRestart('crash', 5, 'all five handled')
  })

  it('when the broker connection drops, then the consumer resumes on new channels', async () => {
    const { connection, consumer, signals } = await fixture.startConsumer([recordingHandler('reconnecting')])

    connection.drop('test: link lost')
    expect(consumer.health().consuming).toBe(false)
    await eventually('consuming again', () => consumer.health().consuming)
    await expectNewMessageInEffect(signals, 'reconnecting')
  })
})
