/** What the fact panel shows of one fact: its CloudEvents attributes and its trace link (pure). */
import type { FactNode } from './api.js'

/** One CloudEvents attribute and its value. */
export type Attribute = [name: string, value: string]

/**
 * The CloudEvents attributes the producer's relay published the fact with, rebuilt from its outbox
 * row as packages/messaging/README.md ("Wire format and topology") documents the envelope: `id` the
 * message id, `source` the producing service, `type`, `time` (the stored `occurredAt` header, else the
 * row's time), `subject` the aggregate id, `datacontenttype` `application/json`, and the extensions
 * `dataschema`, `correlationid`, `causationid`, `traceparent`, `tracestate` where the row has them.
 * Empty when the producer's row was not read (a fact known only from a timeline or a dead letter).
 */
export function cloudEventAttributes(fact: FactNode): Attribute[] {
  const headers = fact.headers
  if (headers === null || fact.producer === null) return []
  const attributes: [string, string | null | undefined][] = [
    ['specversion', '1.0'],
    ['id', fact.id],
    ['source', fact.producer],
    ['type', fact.type],
    ['time', headers.occurredAt ?? fact.occurredAt],
    ['subject', fact.aggregateId],
    ['datacontenttype', 'application/json'],
    ['dataschema', headers.dataschema],
    ['correlationid', headers.correlationId ?? fact.aggregateId ?? fact.id],
    ['causationid', headers.causationId],
    ['traceparent', headers.traceparent],
    ['tracestate', headers.tracestate],
  ]
  return attributes.flatMap(([name, value]) => (value === null || value === undefined ? [] : [[name, value]]))
}

/**
 * The trace's address: `template` (TRACE_URL_TEMPLATE) with `{traceId}` replaced by the trace id;
 * null without a template or a trace id.
 */
export function traceLink(template: string | null, traceId: string | null): string | null {
  return template === null || traceId === null ? null : template.replaceAll('{traceId}', traceId)
}

/** The payload as indented JSON (2 spaces); `no payload read` when there is none. */
export function payloadText(payload: unknown): string {
  return payload === null || payload === undefined ? 'no payload read' : JSON.stringify(payload, null, 2)
}
