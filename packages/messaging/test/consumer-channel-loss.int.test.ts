import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import {
  closeConnectionsNamed,
  collect,
  createInboxFixture,
  envelope,
  eventually,
  recordingHandler,
} from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('channel_loss'))

// Retries of a delivery must end with its channel: otherwise the redelivered copy starts a second
// chain beside the first (interleaved attempt numbers, "dead-lettering failed").
describe('consumer: a channel that goes away mid-retry', () => {
  it('when the broker closes the connection three times while a handler retries, then one chain runs at a time (its attempt count restarts once per redelivery, never interleaves) and the message takes effect once', async () => {
    let closes = 0
    const attempts: number[] = []
    // Fails until the third close (a carrier account that is missing until an operator sets it).
    const handler = recordingHandler('fails-until-fixed', (message) => {
      attempts.push(message.attempt)
      if (closes < 3) throw new Error('carrier account missing')
    })
    const errors: string[] = []
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error(_obj: object, msg?: string) {
        errors.push(msg ?? '')
      },
    }
    const { signals, consumer } = await fixture.startConsumer([handler], {
      maxAttempts: 1_000,
      retryBaseMs: 150,
      retryMaxMs: 150,
      logger,
    })
    const handled = collect(signals, 'handled')
    const message = envelope()
    await fixture.publish(message)
    // True once an attempt from index `from` on restarts the count: the redelivered copy has begun.
    const restartedSince = (from: number) =>
      attempts.some((n, i) => i >= from && i > 0 && n <= (attempts[i - 1] as number))
    for (let close = 1; close <= 3; close += 1) {
      const before = attempts.length
      await eventually('two more attempts', () => attempts.length >= before + 2)
      const closing = attempts.length
      expect(
        await closeConnectionsNamed(`${fixture.prefix}-consumer`, 'closed by the channel-loss test'),
      ).toBe(1)
      // The cause is fixed only once the redelivered copy has started: rabbitmqctl may return before
      // the consumer reads the broker's close, and an attempt already due on the closed channel would
      // then succeed, commit, and leave the redelivered copy a duplicate with no attempt of its own.
      await eventually('the redelivered copy attempted', () => restartedSince(closing))
      closes = close
      await eventually('consuming again', () => consumer.health().consuming)
    }
    await eventually('the message handled', () => handled.length === 1, 20_000)
    // Watched for a few retry periods: no orphaned chain goes on after the one that committed.
    const settled = attempts.length
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(attempts.length).toBe(settled)
    // One chain at a time: attempt numbers grow within a chain, and a redelivered copy restarts
    // from the broker's x-delivery-count. So the sequence drops exactly once per close; chains
    // running side by side would interleave and drop again and again (dozens of drops).
    const drops = attempts.filter((n, i) => i > 0 && n <= (attempts[i - 1] as number)).length
    expect(drops).toBe(3)
    expect(handled.map((s) => s.id)).toEqual([message.id])
    expect(await fixture.effects('fails-until-fixed')).toHaveLength(1)
    expect(errors).toEqual([])
  })
})
