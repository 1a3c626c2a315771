import { describe, expect, it } from 'vitest'
import type { MessageContract, StandardSchemaV1 } from '../types.js'
import { parseDelivery } from './parse-delivery.js'

interface Paid {
  orderId: string
  amount: number
}

// A hand-made Standard Schema, so the unit test needs no zod.
const schema: StandardSchemaV1<unknown, Paid> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate(value) {
      const v = value as Partial<Paid> | null
      if (typeof v?.orderId !== 'string')
        return { issues: [{ message: 'expected a string', path: ['orderId'] }] }
      if (typeof v.amount !== 'number')
        return { issues: [{ message: 'expected a number', path: [{ key: 'amount' }] }] }
      return { value: { orderId: v.orderId, amount: v.amount } }
    },
  },
}
const contract: MessageContract<Paid> = {
  type: 'payment.processed.v1',
  routingKey: 'payment.processed',
  schema,
}

const envelope = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  specversion: '1.0',
  id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
  source: 'payment',
  type: 'payment.processed.v1',
  time: '2026-11-29T19:00:00.000Z',
  datacontenttype: 'application/json',
  correlationid: 'order-1',
  causationid: '0190f1d2-3c4b-7a5e-8f00-000000000000',
  data: { orderId: 'order-1', amount: 1250 },
  ...overrides,
})
const deliver = (body: unknown) =>
  parseDelivery(
    {
      content: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      routingKey: 'payment.processed',
    },
    contract,
  )

describe('parseDelivery', () => {
  it('when the envelope and payload are valid, then the handler gets the message with its attributes', async () => {
    const parsed = await deliver(envelope())
    expect(parsed).toEqual({
      ok: true,
      message: {
        id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
        type: 'payment.processed.v1',
        source: 'payment',
        time: new Date('2026-11-29T19:00:00.000Z'),
        subject: undefined,
        correlationId: 'order-1',
        causationId: '0190f1d2-3c4b-7a5e-8f00-000000000000',
        traceparent: undefined,
        tracestate: undefined,
        routingKey: 'payment.processed',
        payload: { orderId: 'order-1', amount: 1250 },
      },
    })
  })

  it('when the body is not JSON, then it is poison with the parse error', async () => {
    const parsed = await deliver('{"specversion":')
    expect(parsed.ok).toBe(false)
    expect(!parsed.ok && parsed.reason).toMatch(/^body is not JSON/)
  })

  it('when the type is another version, then it is poison naming both types', async () => {
    const parsed = await deliver(envelope({ type: 'payment.processed.v2' }))
    expect(parsed).toMatchObject({ ok: false, type: 'payment.processed.v2' })
    expect(!parsed.ok && parsed.reason).toContain(
      `'payment.processed.v2' is not the handled type 'payment.processed.v1'`,
    )
  })

  it('when several attributes are wrong, then the reason lists each of them', async () => {
    const parsed = await deliver(
      envelope({ id: 'not-a-uuid', time: 'yesterday', source: undefined, correlationid: 42 }),
    )
    expect(!parsed.ok && parsed.reason).toBe(
      'invalid envelope: id: not a UUID; source: missing or not a non-empty string; time: not RFC 3339; correlationid: not a non-empty string',
    )
  })

  it('when the source or partition key holds a NUL character, then it is poison (PostgreSQL text cannot store it)', async () => {
    const parsed = await deliver(
      envelope({ source: 'pay\u0000ment', partitionkey: 'order\u0000-1', sequence: '1' }),
    )
    expect(!parsed.ok && parsed.reason).toBe(
      'invalid envelope: source: holds a NUL character (U+0000); partitionkey: holds a NUL character (U+0000)',
    )
  })

  it('when the source or partition key holds a lone surrogate, then it is poison; a surrogate pair is a character', async () => {
    const parsed = await deliver(
      envelope({ source: 'pay\ud800ment', partitionkey: 'order-\udc001', sequence: '1' }),
    )
    expect(!parsed.ok && parsed.reason).toBe(
      'invalid envelope: source: holds a lone surrogate; partitionkey: holds a lone surrogate',
    )
    expect((await deliver(envelope({ partitionkey: 'order-\u{1f600}', sequence: '1' }))).ok).toBe(true)
  })

  it('when the payload fails the schema, then the reason carries the issue path', async () => {
    const parsed = await deliver(envelope({ data: { orderId: 'order-1', amount: '12.50' } }))
    expect(parsed).toMatchObject({ ok: false, id: '0190f1d2-3c4b-7a5e-8f00-000000000001' })
    expect(!parsed.ok && parsed.reason).toBe('invalid payload: amount: expected a number')
  })

  it('when the body is a JSON array, then it is poison', async () => {
    expect(await deliver([1, 2])).toEqual({ ok: false, reason: 'body is not a JSON object' })
  })

  it('when the optional attributes are absent, then the data is JSON, the time is the AMQP timestamp or now, and the correlation id falls back to the AMQP one, the subject, then the id', async () => {
    const bare = envelope({ datacontenttype: undefined, time: undefined, correlationid: undefined })
    const withProperties = await parseDelivery(
      {
        content: Buffer.from(JSON.stringify(bare)),
        routingKey: 'payment.processed',
        properties: { correlationId: 'amqp-corr', timestamp: 1_764_442_800 },
      },
      contract,
    )
    expect(withProperties).toMatchObject({
      ok: true,
      message: { correlationId: 'amqp-corr', time: new Date(1_764_442_800_000) },
    })
    const bySubject = await deliver({ ...bare, subject: 'order-9' })
    expect(bySubject.ok && bySubject.message.correlationId).toBe('order-9')
    const before = Date.now()
    const byId = await deliver(bare)
    expect(byId.ok && byId.message.correlationId).toBe('0190f1d2-3c4b-7a5e-8f00-000000000001')
    expect(byId.ok && byId.message.time.getTime()).toBeGreaterThanOrEqual(before)
  })

  it('when datacontenttype is a JSON media type with parameters, then it is taken; another type is poison', async () => {
    const charset = await deliver(envelope({ datacontenttype: 'application/json; charset=utf-8' }))
    expect(charset.ok).toBe(true)
    const suffix = await deliver(envelope({ datacontenttype: 'application/vnd.shop+json' }))
    expect(suffix.ok).toBe(true)
    const text = await deliver(envelope({ datacontenttype: 'text/plain' }))
    expect(!text.ok && text.reason).toBe('invalid envelope: datacontenttype: "text/plain" is not JSON')
  })

  it.each([['ce-'], ['ce_'], ['cloudEvents_'], ['cloudEvents:']])(
    'when the attributes come as %s headers (binary mode), then the body is the data and the message is as in structured mode',
    async (prefix) => {
      const { data, ...attributes } = envelope({ tracestate: 'vendor=1' })
      const headers = Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [`${prefix}${name}`, value]),
      )
      // amqplib hands long-string header values over as Buffers.
      headers[`${prefix}source`] = Buffer.from('payment')
      const parsed = await parseDelivery(
        {
          content: Buffer.from(JSON.stringify(data)),
          routingKey: 'payment.processed',
          properties: { contentType: 'application/json', headers },
        },
        contract,
      )
      expect(parsed).toMatchObject({
        ok: true,
        message: {
          id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
          source: 'payment',
          correlationId: 'order-1',
          tracestate: 'vendor=1',
          payload: { orderId: 'order-1', amount: 1250 },
        },
      })
    },
  )

  it('when a binary-mode message has no datacontenttype header, then its AMQP content type says what the data is', async () => {
    const { data, ...attributes } = envelope({ datacontenttype: undefined })
    const headers = Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [`ce-${name}`, value]),
    )
    const parsed = await parseDelivery(
      {
        content: Buffer.from(JSON.stringify(data)),
        routingKey: 'payment.processed',
        properties: { contentType: 'text/plain', headers },
      },
      contract,
    )
    expect(!parsed.ok && parsed.reason).toBe('invalid envelope: datacontenttype: "text/plain" is not JSON')
  })

  it('when a structured-mode message also carries ce- headers, then its content type decides: the body is the event', async () => {
    const parsed = await parseDelivery(
      {
        content: Buffer.from(JSON.stringify(envelope())),
        routingKey: 'payment.processed',
        properties: {
          contentType: 'application/cloudevents+json; charset=utf-8',
          headers: { 'ce-specversion': '1.0', 'ce-id': 'copied-by-a-bridge' },
        },
      },
      contract,
    )
    expect(parsed.ok && parsed.message.id).toBe('0190f1d2-3c4b-7a5e-8f00-000000000001')
  })

  it('when time is no real date, then it is poison; an AMQP timestamp past the Date range counts as absent', async () => {
    const impossible = await deliver(envelope({ time: '2026-13-01T10:00:00Z' }))
    expect(!impossible.ok && impossible.reason).toBe('invalid envelope: time: not RFC 3339')
    const before = Date.now()
    const huge = await parseDelivery(
      {
        content: Buffer.from(JSON.stringify(envelope({ time: undefined }))),
        routingKey: 'payment.processed',
        properties: { timestamp: 1e13 },
      },
      contract,
    )
    expect(huge.ok && huge.message.time.getTime()).toBeGreaterThanOrEqual(before)
  })
})
