/**
 * Old and new builds exchange messages. `golden-v1.json` is what the build before the CloudEvents
 * content type published for `WIRE_ROWS` (captured with `test/wire/capture.ts`), `golden-v2.json`
 * what the build before `tracestate` in the envelope published, `golden-v3.json` what this build
 * publishes. This build publishes v3 byte for byte. v2 differs from v1 only by the AMQP content type
 * (`application/cloudevents+json`) and a `dataschema` attribute where the row has one; v3 from v2
 * only by a `tracestate` attribute where the row has one. Neither is read by an older consumer (it
 * parses the body, and the CloudEvents spec has consumers ignore attributes they do not know: the
 * older builds' parseDelivery accepted every newer message when each was written); and this build's
 * consumer handles v1, v2 and v3 messages alike.
 */
import { readFileSync } from 'node:fs'
import amqp from 'amqplib'
import { describe, expect, it } from 'vitest'
import { AMQP_URL, useFixture } from '@saga/testkit'
import { createRelay } from '../src/outbox/relay.js'
import { collect, createInboxFixture, eventually, recordingHandler } from './inbox-fixture.js'
import { publishWireRows, WIRE_ROWS, type WireMessage } from './wire/wire-fixture.js'

const readGolden = (name: string): WireMessage[] =>
  JSON.parse(readFileSync(new URL(`./wire/${name}`, import.meta.url), 'utf8')) as WireMessage[]
const v1 = readGolden('golden-v1.json')
const v2 = readGolden('golden-v2.json')
const v3 = readGolden('golden-v3.json')

const fixture = useFixture(() => createInboxFixture('wire'))

describe('wire format', () => {
  it('when the relay publishes the golden rows, then every body byte and every AMQP property is golden v3', async () => {
    const published = await publishWireRows(createRelay, fixture.db.pool)
    expect(published).toEqual(v3)
  })

  it('when v3 is compared with v2, then only the rows’ tracestate differs, an attribute v2 consumers ignore', () => {
    expect(v3).toHaveLength(v2.length)
    v3.forEach((message, index) => {
      const old = v2[index]!
      expect(message.properties).toEqual(old.properties)
      const { tracestate, ...rest } = JSON.parse(message.body) as Record<string, unknown>
      expect(rest).toEqual(JSON.parse(old.body))
      const row = WIRE_ROWS[index]!
      expect(tracestate).toBe('tracestate' in row.headers ? row.headers.tracestate : undefined)
      if (tracestate === undefined) expect(message.body).toBe(old.body)
    })
  })

  it('when v2 is compared with v1, then only the content type and the rows’ dataschema differ', () => {
    expect(v2).toHaveLength(v1.length)
    v2.forEach((message, index) => {
      const old = v1[index]!
      expect(message.properties).toEqual({
        ...old.properties,
        contentType: 'application/cloudevents+json; charset=utf-8',
      })
      const { dataschema, ...rest } = JSON.parse(message.body) as Record<string, unknown>
      expect(rest).toEqual(JSON.parse(old.body))
      const row = WIRE_ROWS[index]!
      expect(dataschema).toBe('dataschema' in row.headers ? row.headers.dataschema : undefined)
      if (dataschema === undefined) expect(message.body).toBe(old.body)
    })
  })

  it.each([
    ['v1', v1],
    ['v2', v2],
    ['v3', v3],
  ])(
    'when %s messages arrive (same bytes, same properties), then the consumer handles each once',
    async (name, golden) => {
      const { signals } = await fixture.startConsumer([recordingHandler(`wire-reader-${name}`)])
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
      await eventually(`every ${name} message handled`, () => handled.length === golden.length)
      // Deliveries run side by side (prefetch and pool slots), so they finish in any order.
      const byId = (a: string[], b: string[]) => (a[0] as string).localeCompare(b[0] as string)
      expect(handled.map((h) => [h.id, h.correlationId]).sort(byId)).toEqual(
        WIRE_ROWS.map((row) => [row.id, row.headers.correlationId]).sort(byId),
      )
      const effects = await fixture.effects(`wire-reader-${name}`)
      expect(effects.map((e) => e.n).sort((a, b) => a - b)).toEqual([1, 2, 3])
    },
  )
})
