import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { createSignals } from '../src/signals.js'
import { collect, createInboxFixture, envelope, eventually, recordingHandler } from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('concurrency'))

/** Counts handler bodies running at once (they run inside their inbox transaction). */
function gauge(): { enter: () => void; leave: () => void; now: () => number; most: () => number } {
  let now = 0
  let most = 0
  return {
    enter() {
      now += 1
      most = Math.max(most, now)
    },
    leave() {
      now -= 1
    },
    now: () => now,
    most: () => most,
  }
}

const pairs = (rows: Array<{ message_id: string; handler: string }>): number =>
  new Set(rows.map((row) => `${row.message_id}/${row.handler}`)).size

describe('consumer-wide handler concurrency', () => {
  it('when 5 handlers share a limit of 2, then never more than 2 handler transactions run at once and every message is handled once', async () => {
    const handlers = 5
    const messages = 20
    const limit = 2
    const running = gauge()
    let mostWaiting = 0
    const names = Array.from({ length: handlers }, (_, index) => `h${index}`)
    const signals = createSignals()
    const duplicates = collect(signals, 'duplicate')
    const { consumer } = await fixture.startConsumer(
      names.map((name) =>
        recordingHandler(name, async () => {
          running.enter()
          mostWaiting = Math.max(mostWaiting, consumer.health().transactions.waiting)
          // Long enough for the other channels' deliveries to pile up behind the limit.
          await sleep(10)
          running.leave()
        }),
      ),
      { concurrency: limit, prefetch: 10, signals },
    )

    // Every handler queue is bound to the same routing key: each message goes to all five.
    for (let n = 0; n < messages; n += 1) await fixture.publish(envelope({ data: { n } }))

    await eventually(
      'every handler handled every message',
      async () => (await fixture.effects()).length === handlers * messages,
      30_000,
    )
    const effects = await fixture.effects()
    expect(pairs(effects)).toBe(handlers * messages)
    expect(duplicates).toEqual([])
    expect(running.most()).toBeLessThanOrEqual(limit)
    // The limit was actually in play: it filled and deliveries of other channels queued behind it.
    expect(running.most()).toBe(limit)
    expect(mostWaiting).toBeGreaterThan(0)
    expect(consumer.metrics()).toMatchObject({ handledTotal: handlers * messages, inFlight: 0 })
    expect(consumer.health().transactions).toEqual({ limit, running: 0, waiting: 0 })
    await consumer.stop()
  })

  it('when stopped while deliveries wait for a slot, then the waiters are released unacked and only the committed one is acked', async () => {
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const running = gauge()
    const held = (): Promise<void> => {
      running.enter()
      return gate.finally(() => running.leave())
    }
    const first = await fixture.startConsumer(
      [recordingHandler('stop-a', held), recordingHandler('stop-b', held)],
      { concurrency: 1, prefetch: 5 },
    )
    for (let n = 0; n < 3; n += 1) await fixture.publish(envelope({ data: { n } }))
    await eventually('one running, five waiting for the slot', () => {
      const { running: now, waiting } = first.consumer.health().transactions
      return now === 1 && waiting === 5 && running.now() === 1
    })

    const stopped = first.consumer.stop()
    await eventually('the waiters left the queue', () => first.consumer.health().transactions.waiting === 0)
    release()
    await stopped
    await first.connection.close()

    const committed = [...(await fixture.effects('stop-a')), ...(await fixture.effects('stop-b'))]
    expect(committed).toHaveLength(1)
    await eventually('the five not started back in their queues', async () => {
      const ready =
        (await fixture.ready(fixture.queue('stop-a'))) + (await fixture.ready(fixture.queue('stop-b')))
      return ready === 5
    })

    const signals = createSignals()
    const duplicates = collect(signals, 'duplicate')
    await fixture.startConsumer([recordingHandler('stop-a'), recordingHandler('stop-b')], {
      concurrency: 1,
      signals,
    })
    await eventually('all six handled', async () => {
      const all = [...(await fixture.effects('stop-a')), ...(await fixture.effects('stop-b'))]
      return all.length === 6
    })
    const all = [...(await fixture.effects('stop-a')), ...(await fixture.effects('stop-b'))]
    expect(pairs(all)).toBe(6)
    // The one that committed before the stop was acked: it did not come back as a duplicate.
    expect(duplicates).toEqual([])
  })
})
