import { describe, expect, it } from 'vitest'
import { toPublishable, type OutboxRow } from './envelope.js'

const row: OutboxRow = {
  id: '01a228ec-8c95-77ab-bd72-a82ac550c50f',
  type: 'order.created.v1',
  routing_key: 'order.created',
  payload: { orderId: 'o-1', totalMinor: 1999, currency: 'EUR' },
  headers: {
    correlationId: 'o-1',
    causationId: 'm-0',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  },
  aggregate_id: 'o-1',
  occurred_at: new Date('2026-11-29T20:00:00.123Z'),
  attempts: 0,
}

describe('toPublishable', () => {
  it('when a row is published, then the body is a CloudEvents 1.0 structured envelope', () => {
    const { content } = toPublishable(row, 'order')
    expect(JSON.parse(content.toString('utf8'))).toEqual({
      specversion: '1.0',
      id: row.id,
      source: 'order',
      type: 'order.created.v1',
      time: '2026-11-29T20:00:00.123Z',
      subject: 'o-1',
      datacontenttype: 'application/json',
      correlationid: 'o-1',
      causationid: 'm-0',
      traceparent: row.headers?.traceparent,
      data: row.payload,
    })
  })

  it('when a row is published, then the AMQP properties carry the row id, type, correlation and persistence', () => {
    const { routingKey, options } = toPublishable(row, 'order')
    expect(routingKey).toBe('order.created')
    expect(options).toEqual({
      messageId: row.id,
      type: 'order.created.v1',
      correlationId: 'o-1',
      contentType: 'application/cloudevents+json; charset=utf-8',
      persistent: true,
      mandatory: true,
      appId: 'order',
      timestamp: Math.floor(row.occurred_at.getTime() / 1000),
      headers: { 'causation-id': 'm-0', traceparent: row.headers?.traceparent },
    })
  })

  it('when a row has no causation or trace, then those attributes and headers are left out', () => {
    const bare = toPublishable({ ...row, headers: { correlationId: 'o-1' }, aggregate_id: null }, 'order')
    const body = JSON.parse(bare.content.toString('utf8')) as Record<string, unknown>
    expect(Object.keys(body)).not.toContain('causationid')
    expect(Object.keys(body)).not.toContain('subject')
    expect(bare.options.headers).toEqual({})
  })
})
