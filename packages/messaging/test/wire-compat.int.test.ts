/**
 * Old and new builds exchange messages: this build publishes byte for byte what the golden build
 * (the one `test/wire/golden-v1.json` was captured from with `test/wire/capture.ts`) published for
 * the same outbox rows, and its consumer handles what the golden build published.
 */
import { readFileSync } from 'node:fs'
import amqp from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AMQP_URL, uniqueName } from '@saga/testkit'
import { createRelay } from '../src/outbox/relay.js'
import {
  collect,
  createInboxFixture,
  eventually,
  recordingHandler,
  type InboxFixture,
} from './inbox-fixture.js'
import { insertWireRows, rawTap, WIRE_ROWS, type WireMessage } from './wire/wire-fixture.js'

const golden = JSON.parse(
  readFileSync(new URL('./wire/golden-v1.json', import.meta.url), 'utf8'),
) as WireMessage[]

let fixture: InboxFixture
beforeAll(async () => {
  fixture = await createInboxFixture('wire')
})
afterAll(() => fixture?.cleanup())

describe('wire format', () => {
  it('when the relay publishes the golden rows, then every body byte and every AMQP property is what the golden build sent', async () => {
    const exchange = uniqueName('wire_relay')
    const tap = await rawTap(exchange)
    try {
      await insertWireRows(fixture.db.pool)
      const relay = createRelay({
        pool: fixture.db.pool,
        amqpUrl: AMQP_URL,
        exchange,
        service: 'wire',
        retentionIntervalMs: 0,
      })
      await relay.start()
      const published = await tap.take(WIRE_ROWS.length)
      await relay.stop()
      expect(published).toEqual(golden)
    } finally {
      await tap.close()
    }
  })

  it('when the golden build’s messages arrive (same bytes, same properties), then the consumer handles each once', async () => {
    const { signals } = await fixture.startConsumer([recordingHandler('wire-reader')])
    const handled = collect(signals, 'handled')
    const connection = await amqp.connect(AMQP_URL)
    const channel = await connection.createConfirmChannel()
    for (const message of golden) {
      const { headers, ...properties } = message.properties
      channel.publish(fixture.exchange, message.routingKey, Buffer.from(message.body, 'utf8'), {
        ...(properties as Record<string, unknown>),
        headers: headers as Record<string, unknown>,
      })
    }
    await channel.waitForConfirms()
    await connection.close()
    await eventually('both golden messages handled', () => handled.length === golden.length)
    expect(handled.map((h) => [h.id, h.correlationId])).toEqual([
      [WIRE_ROWS[0].id, 'order-1'],
      [WIRE_ROWS[1].id, 'order-2'],
    ])
    expect((await fixture.effects('wire-reader')).map((e) => e.n)).toEqual([1, 2])
  })
})
