import type { Options } from 'amqplib'
import type { Envelope } from '../types.js'

/** What the `headers` column holds: the envelope attributes that have no column of their own. */
export interface OutboxHeaders {
  correlationId: string
  causationId?: string
  traceparent?: string
  /** W3C `tracestate` of the active context at enqueue, when it had one. */
  tracestate?: string
  /** The caller's `occurredAt` (ISO 8601), sent as CloudEvents `time`; absent: `occurred_at`. */
  occurredAt?: string
  /** The payload's schema URI, sent as CloudEvents `dataschema`. */
  dataschema?: string
  /** A sequenced message's key (`OutgoingMessage.orderingKey`), sent as CloudEvents `partitionkey`. */
  orderingKey?: string
  /** Its number within the key and routing key, from 1, sent as CloudEvents `sequence`. */
  sequence?: number
}

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
    ...(headers.sequence === undefined
      ? {}
      : { partitionkey: headers.orderingKey, sequence: String(headers.sequence).padStart(20, '0') }),
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
