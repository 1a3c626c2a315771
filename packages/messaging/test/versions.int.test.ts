import amqp from 'amqplib'
import { describe, expect, it } from 'vitest'
import { AMQP_URL, useFixture } from '@saga/testkit'
import { createSignals } from '../src/signals.js'
import { memoryLogger } from '../src/testing/index.js'
import type { ConsumedMessage, HandlerDefinition, MessageContract, Upcaster } from '../src/types.js'
import {
  collect,
  createInboxFixture,
  envelope,
  eventually,
  happened,
  insertEffect,
  type Happened,
  type Tx,
} from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('versions'))

/** `test.happened.v2`: v1's `n` and a `unit`. */
interface HappenedV2 extends Happened {
  unit: string
}
const happenedV2: MessageContract<HappenedV2> = {
  type: 'test.happened.v2',
  routingKey: happened.routingKey,
  schema: {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) => {
        const v = value as Partial<HappenedV2> | null
        return typeof v?.n === 'number' && typeof v.unit === 'string'
          ? { value: { n: v.n, unit: v.unit } }
          : { issues: [{ message: 'expected n and unit' }] }
      },
    },
  },
}
const fromV1: Upcaster<HappenedV2, Happened> = { from: happened, upcast: ({ n }) => ({ n, unit: 'pcs' }) }

/** A v2 handler (with `upcasts`, if given) writing one effect row per run; `seen` gets every message it ran. */
function v2Handler(
  name: string,
  upcasts?: Upcaster<HappenedV2>[],
): HandlerDefinition<Tx, HappenedV2> & { seen: ConsumedMessage<HappenedV2>[] } {
  const seen: ConsumedMessage<HappenedV2>[] = []
  return {
    name,
    message: happenedV2,
    upcasts,
    seen,
    async handle(message, tx) {
      seen.push(message)
      await insertEffect(tx, name, message)
    },
  }
}

/** A v1 handler under `name`: the build before v2, on the same queue. */
const v1Handler = (name: string): HandlerDefinition<Tx, Happened> => ({
  name,
  message: happened,
  handle: (message, tx) => insertEffect(tx, name, message),
})

const v2Envelope = (n: number, overrides: Record<string, unknown> = {}) =>
  envelope({ type: happenedV2.type, data: { n, unit: 'kg' }, ...overrides })

describe('older versions: upcasters', () => {
  it('when a v2 handler with an upcaster from v1 gets a v1 and a v2, then it handles each once; a v2 with the v1 id is a duplicate', async () => {
    const handler = v2Handler('take-both', [fromV1])
    const { signals } = await fixture.startConsumer([handler])
    const handled = collect(signals, 'handled')
    const duplicates = collect(signals, 'duplicate')
    const v1 = envelope({ data: { n: 1 } })
    const v2 = v2Envelope(2)
    await fixture.publish(v1)
    await fixture.publish(v2)
    await eventually('both handled', () => handled.length === 2)
    // The same message id in another version: the inbox dedups by id whatever the version.
    await fixture.publish(v2Envelope(3, { id: v1.id }))
    await eventually('the duplicate skipped', () => duplicates.length === 1)

    // The two may run side by side: compared in version order.
    expect(handled.map((h) => [h.id, h.type]).sort((a, b) => a[1]!.localeCompare(b[1]!))).toEqual([
      [v1.id, 'test.happened.v1'],
      [v2.id, 'test.happened.v2'],
    ])
    expect(handler.seen.map((m) => m.payload).sort((a, b) => a.n - b.n)).toEqual([
      { n: 1, unit: 'pcs' },
      { n: 2, unit: 'kg' },
    ])
    expect(duplicates).toEqual([{ id: v1.id, type: 'test.happened.v2', handler: 'take-both' }])
    const effects = (await fixture.effects('take-both')).sort((a, b) => a.n - b.n)
    expect(effects.map((e) => [e.message_id, e.n])).toEqual([
      [v1.id, 1],
      [v2.id, 2],
    ])
    expect(await fixture.drainDeadLetters('take-both')).toEqual([])
  })

  it('when a v2 handler without an upcaster gets a v1, then the v1 is dead-lettered: no upcaster', async () => {
    const { signals } = await fixture.startConsumer([v2Handler('no-upcaster')])
    const deadLettered = signals.waitFor('deadLettered', undefined, 30_000)
    const v1 = envelope({ data: { n: 1 } })
    await fixture.publish(v1)
    const reason = "no upcaster from 'test.happened.v1' to 'test.happened.v2'"
    expect(await deadLettered).toEqual({
      id: v1.id,
      type: 'test.happened.v1',
      handler: 'no-upcaster',
      reason,
    })
    const [copy, ...more] = await fixture.drainDeadLetters('no-upcaster')
    expect(more).toEqual([])
    expect(copy?.properties.headers).toMatchObject({ 'x-dead-letter-reason': reason })
    expect(await fixture.effects('no-upcaster')).toEqual([])
  })
})

describe('newer versions: held, not poison', () => {
  it('when a v1 consumer gets a v2, then it holds it without a slot; once it stops, a v2 consumer of the queue handles it once', async () => {
    const logger = memoryLogger()
    const old = await fixture.startConsumer([v1Handler('roll-out')], { concurrency: 1, batchMax: 1, logger })
    const held = old.signals.waitFor('held', undefined, 30_000)
    const v2 = v2Envelope(5)
    await fixture.publish(v2)
    expect(await held).toEqual({ id: v2.id, type: 'test.happened.v2', handler: 'roll-out', times: 1 })
    expect(old.consumer.metrics().byHandler['roll-out']).toMatchObject({ heldTotal: 1, deadLetteredTotal: 0 })
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([
      {
        level: 'warn',
        obj: { messageId: v2.id, type: 'test.happened.v2', handler: 'roll-out', times: 1 },
        msg: 'newer version of the message held for a consumer that handles it',
      },
    ])
    // The hold takes no slot: a v1 behind it is handled on the only one while the v2 is held.
    const v1Handled = old.signals.waitFor('handled', undefined, 30_000)
    const v1 = envelope({ data: { n: 4 } })
    await fixture.publish(v1)
    expect((await v1Handled).id).toBe(v1.id)
    await old.consumer.stop()

    const handler = v2Handler('roll-out')
    const signals = createSignals()
    const handled = signals.waitFor('handled', (h) => h.id === v2.id, 30_000)
    await fixture.startConsumer([handler], { signals })
    await handled
    expect(handler.seen.map((m) => [m.id, m.routingKey])).toEqual([[v2.id, happened.routingKey]])
    expect((await fixture.effects('roll-out')).map((e) => e.message_id)).toEqual([v1.id, v2.id])
    expect(await fixture.drainDeadLetters('roll-out')).toEqual([])
  })

  it('when a v1 and a v2 consumer run side by side, then a v2 the v1 one held reaches the v2 one without the v1 one stopping', async () => {
    const old = await fixture.startConsumer([v1Handler('side-by-side')])
    const held = collect(old.signals, 'held')
    const v2 = v2Envelope(6)
    await fixture.publish(v2)
    await eventually('held by the v1 consumer', () => held.length === 1)
    expect(old.consumer.health().handlers['side-by-side']).toMatchObject({ held: 1 })

    const handler = v2Handler('side-by-side')
    const signals = createSignals()
    const handledNext = signals.waitFor('handled', (h) => h.id === v2.id, 45_000)
    await fixture.startConsumer([handler], { signals })
    const handled = await handledNext
    expect(handled.type).toBe('test.happened.v2')
    // Put back through the default exchange, it still tells the handler the key it was published with.
    expect(handler.seen.map((m) => [m.id, m.routingKey])).toEqual([[v2.id, happened.routingKey]])
    expect(old.consumer.health().consuming).toBe(true)
    expect(held.every((h) => h.id === v2.id)).toBe(true)
    expect((await fixture.effects('side-by-side')).map((e) => e.message_id)).toEqual([v2.id])
    await eventually('no hold left', () => old.consumer.metrics().byHandler['side-by-side']?.held === 0)
    expect(await fixture.drainDeadLetters('side-by-side')).toEqual([])
  })
})

describe('a hold and stop', () => {
  it('when a consumer stops while it holds a v2 for a minute, then the stop does not wait for it and the v2 is back in the queue', async () => {
    const old = await fixture.startConsumer([v1Handler('held-at-stop')], { drainTimeoutMs: 50_000 })
    const held = old.signals.waitFor('held', undefined, 30_000)
    // Held six times before: this hold lasts 60 s.
    const v2 = v2Envelope(7)
    const connection = await amqp.connect(AMQP_URL)
    try {
      const channel = await connection.createConfirmChannel()
      channel.publish(fixture.exchange, happened.routingKey, Buffer.from(JSON.stringify(v2)), {
        messageId: v2.id as string,
        headers: { 'x-held-times': 6 },
      })
      await channel.waitForConfirms()
    } finally {
      await connection.close()
    }
    expect(await held).toMatchObject({ id: v2.id, times: 7 })
    const began = performance.now()
    await old.consumer.stop()
    // Far below both the hold (60 s) and the drain timeout (50 s) it would otherwise wait out.
    expect(performance.now() - began).toBeLessThan(20_000)
    await eventually(
      'the v2 back in the queue',
      async () => (await fixture.ready(fixture.queue('held-at-stop'))) === 1,
    )
    expect(await fixture.drainDeadLetters('held-at-stop')).toEqual([])
  })
})
