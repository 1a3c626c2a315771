import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import {
  collect,
  createInboxFixture,
  envelope,
  eventually,
  happened,
  recordingHandler,
} from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('inbox'))

/** A promise a test resolves by hand, to hold a handler inside its transaction. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

describe('inbox deduplication', () => {
  it('when the same message is delivered twice, then its effect happens once', async () => {
    const { signals } = await fixture.startConsumer([recordingHandler('twice')])
    const message = envelope()
    const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)
    const duplicate = signals.waitFor('duplicate', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)
    await fixture.publish(message)

    expect(await handled).toMatchObject({
      handler: 'twice',
      type: happened.type,
      correlationId: message.correlationid,
    })
    expect(await duplicate).toEqual({ id: message.id, type: happened.type, handler: 'twice' })
    expect((await fixture.effects('twice')).map((row) => row.message_id)).toEqual([message.id])
    await eventually('both copies acked', async () => (await fixture.ready(fixture.queue('twice'))) === 0)
  })

  it('when two consumers get the same message at the same moment, then the second waits and its effect happens once', async () => {
    const held = gate()
    const handler = recordingHandler('racing', () => held.opened)
    const first = await fixture.startConsumer([handler], { prefetch: 1 })
    const second = await fixture.startConsumer([handler], { prefetch: 1 })
    const handledByFirst = collect(first.signals, 'handled')
    const handledBySecond = collect(second.signals, 'handled')
    const duplicates = [collect(first.signals, 'duplicate'), collect(second.signals, 'duplicate')]
    const message = envelope()

    await fixture.publish(message)
    await fixture.publish(message)
    // One copy runs the handler (held open); the other's inbox INSERT must block on the primary key.
    // pgDatabase sends it in one query string with BEGIN (`BEGIN;\nINSERT INTO inbox_message ...`).
    await eventually('an inbox insert waiting on the first transaction', async () => {
      const { rows } = await fixture.db.pool.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO inbox_message%'`,
      )
      return rows[0]?.waiting === 1
    })
    held.open()

    await eventually(
      'one handled and one duplicate',
      () => handledByFirst.length + handledBySecond.length === 1,
    )
    await eventually('the duplicate reported', () => duplicates.flat().length === 1)
    expect(await fixture.effects('racing')).toHaveLength(1)
    await eventually('both copies acked', async () => (await fixture.ready(fixture.queue('racing'))) === 0)
  })
})

describe('inbox transaction', () => {
  it('when a handler throws, then its writes roll back, it is retried with backoff, then dead-lettered with the error', async () => {
    const startedAt: number[] = []
    const failing = recordingHandler('always-throws', () => {
      startedAt.push(performance.now())
      throw new Error('carrier unreachable')
    })
    const { signals } = await fixture.startConsumer([failing], {
      maxAttempts: 3,
      retryBaseMs: 200,
      retryMaxMs: 1_000,
    })
    const retrying = collect(signals, 'retrying')
    const message = envelope()
    const deadLettered = signals.waitFor('deadLettered', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)

    expect(await deadLettered).toEqual({
      id: message.id,
      type: happened.type,
      handler: 'always-throws',
      reason: 'handler failed after 3 attempts: carrier unreachable',
    })
    expect(retrying.map((s) => [s.attempt, s.error])).toEqual([
      [1, 'carrier unreachable'],
      [2, 'carrier unreachable'],
    ])
    // Equal jitter: the wait after attempt k is 50-100 % of 200 * 2^(k-1) ms.
    const gaps = [startedAt[1]! - startedAt[0]!, startedAt[2]! - startedAt[1]!]
    expect(gaps[0]).toBeGreaterThanOrEqual(100 - 5)
    expect(gaps[1]).toBeGreaterThanOrEqual(200 - 5)
    expect(await fixture.effects('always-throws')).toEqual([])

    const [copy, ...more] = await fixture.drainDeadLetters('always-throws')
    expect(more).toHaveLength(0)
    expect(JSON.parse(copy!.content.toString())).toEqual(message)
    expect(copy!.properties.messageId).toBe(message.id)
    expect(copy!.properties.headers).toMatchObject({
      'x-dead-letter-reason': 'handler failed after 3 attempts: carrier unreachable',
      'x-dead-letter-handler': 'always-throws',
      'x-dead-letter-attempts': 3,
      'x-original-exchange': fixture.exchange,
      'x-original-routing-key': happened.routingKey,
    })
    expect(await fixture.ready(fixture.queue('always-throws'))).toBe(0)
  })

  it('when a handler fails once and then succeeds, then one effect is committed, by attempt 2', async () => {
    const flaky = recordingHandler('flaky', (message) => {
      if (message.attempt === 1) throw new Error('lock timeout')
    })
    const { signals } = await fixture.startConsumer([flaky])
    const message = envelope()
    const handled = signals.waitFor('handled', (s) => s.id === message.id, 30_000)

    await fixture.publish(message)

    await handled
    expect(await fixture.effects('flaky')).toEqual([
      { message_id: message.id, handler: 'flaky', n: 1, attempt: 2 },
    ])
  })

  it('when a message is invalid, then it is dead-lettered at once with the reason and never reaches the handler', async () => {
    const { signals } = await fixture.startConsumer([recordingHandler('strict')], { maxAttempts: 5 })
    const retrying = collect(signals, 'retrying')
    const deadLettered = collect(signals, 'deadLettered')
    // Another event (a newer version of the handled one would be held, not dead-lettered).
    const wrongType = envelope({ type: 'test.other.v1' })
    const wrongPayload = envelope({ data: { n: 'seven' } })
    const notJson = envelope({ datacontenttype: 'application/xml' })

    await fixture.publish('{"specversion": "1.0", ')
    await fixture.publish(wrongType)
    await fixture.publish(wrongPayload)
    await fixture.publish(notJson)

    await eventually('four dead letters', () => deadLettered.length === 4)
    expect(deadLettered.map((s) => [s.id, s.reason])).toEqual([
      [undefined, expect.stringMatching(/^body is not JSON/)],
      [wrongType.id, `invalid envelope: type: 'test.other.v1' is not the handled type 'test.happened.v1'`],
      [wrongPayload.id, 'invalid payload: n: expected a number'],
      [notJson.id, 'invalid envelope: datacontenttype: "application/xml" is not JSON'],
    ])
    expect(retrying).toEqual([])
    expect(await fixture.effects('strict')).toEqual([])
    const copies = await fixture.drainDeadLetters('strict')
    expect(copies.map((copy): unknown => copy.properties.headers?.['x-dead-letter-attempts'])).toEqual([
      0, 0, 0, 0,
    ])
    expect(copies[2]!.properties.headers?.['x-dead-letter-reason']).toBe(
      'invalid payload: n: expected a number',
    )
  })
})
