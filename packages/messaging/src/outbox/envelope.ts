import type { Options } from 'amqplib'
import type { Envelope } from '../types.js'
import type { OutboxHeaders } from './enqueue.js'

/** An outbox row as the relay reads it (column names as in sql/messaging.sql). */
export interface OutboxRow {
  id: string
  type: string
  routing_key: string
  payload: unknown
  /** The payload already serialised (a row handed over at commit); sent as `data` instead of `payload`. */
  payload_json?: string
  headers: Partial<OutboxHeaders> | null
  aggregate_id: string | null
  occurred_at: Date
  attempts: number
  /** The row's age when claimed, ms, by the database's clock (the one that wrote occurred_at). */
  age_ms?: number
}

/**
 * The start of every outbox INSERT, up to the column list's open end: `enqueue`'s values follow in
 * this order, a held row (publish on commit, database.ts) adds `available_at`. `occurred_at` is left
 * to the database's `now()`, so every age is judged on one clock.
 */
export const OUTBOX_INSERT_INTO =
  'INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id'

/** The columns `toPublish` needs, for the claim query. */
export const OUTBOX_COLUMNS =
  'id, type, routing_key, payload, headers, aggregate_id, occurred_at, attempts, ' +
  '(extract(epoch from clock_timestamp() - occurred_at) * 1000)::float8 AS age_ms'

/**
 * The AMQP content type of a structured-mode CloudEvent (the AMQP protocol binding, "Structured
 * Content Mode"), so a CloudEvents SDK reads the body as an event, not as its data.
 */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8'

/** A row ready for `channel.publish`. */
export interface Publishable {
  routingKey: string
  content: Buffer
  options: Options.Publish
}

/**
 * Builds the wire form of a row: a CloudEvents 1.0 structured JSON body and the AMQP properties
 * of packages/messaging/README.md ("Wire format and topology"). `source` is the producing service, e.g. `inventory`.
 */
export function toPublishable(row: OutboxRow, source: string): Publishable {
  const headers = row.headers ?? {}
  const correlationId = headers.correlationId ?? row.aggregate_id ?? row.id
  const envelope: Envelope = {
    specversion: '1.0',
    id: row.id,
    source,
    type: row.type,
    time: headers.occurredAt ?? row.occurred_at.toISOString(),
    subject: row.aggregate_id ?? undefined,
    datacontenttype: 'application/json',
    dataschema: headers.dataschema,
    correlationid: correlationId,
    causationid: headers.causationId,
    traceparent: headers.traceparent,
    tracestate: headers.tracestate,
    data: row.payload_json === undefined ? row.payload : undefined,
  }
  const amqpHeaders: Record<string, string> = {}
  if (headers.causationId) amqpHeaders['causation-id'] = headers.causationId
  if (headers.traceparent) amqpHeaders.traceparent = headers.traceparent
  if (headers.tracestate) amqpHeaders.tracestate = headers.tracestate
  return {
    routingKey: row.routing_key,
    content: Buffer.from(
      row.payload_json === undefined
        ? JSON.stringify(envelope)
        : // `data` is the envelope's last member: the stored JSON goes in as it is, not parsed and re-serialised.
          `${JSON.stringify(envelope).slice(0, -1)},"data":${row.payload_json}}`,
    ),
    options: {
      messageId: row.id,
      type: row.type,
      correlationId,
      contentType: CLOUDEVENTS_CONTENT_TYPE,
      persistent: true,
      mandatory: true,
      appId: source,
      timestamp: Math.floor(
        (headers.occurredAt ? Date.parse(headers.occurredAt) : row.occurred_at.getTime()) / 1000,
      ),
      headers: amqpHeaders,
    },
  }
}
