import type { ConsumedMessage, Envelope, MessageContract, StandardSchemaV1 } from '../types.js'

/** What a delivery turned into: a message the handler can take, or the reason it is poison. */
export type ParsedDelivery<P> =
  | { ok: true; message: Omit<ConsumedMessage<P>, 'attempt'> }
  | { ok: false; reason: string; id?: string | undefined; type?: string | undefined }

/** What `parseDelivery` reads from an AMQP delivery. */
export interface RawDelivery {
  content: Buffer
  routingKey: string
  /** The AMQP properties read: content type, correlation id, timestamp (s) and headers. */
  properties?: {
    contentType?: unknown
    correlationId?: unknown
    timestamp?: unknown
    headers?: Record<string, unknown> | undefined
  }
}

// Any RFC 9562 UUID (the producer makes v7); the inbox column is uuid, so anything else is poison.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// RFC 3339 as CloudEvents requires for `time`; Date.parse alone would accept far looser input.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i

type Fields = Record<string, unknown>

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const text = (fields: Fields, key: string): string | undefined =>
  typeof fields[key] === 'string' && fields[key] !== '' ? fields[key] : undefined

// A JSON media type (RFC 8259's, or a +json structured syntax suffix, RFC 6839), parameters allowed.
const JSON_MEDIA_TYPE = /^\s*application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i

/**
 * Headers of the binary content mode: each CloudEvents attribute under a prefix (`cloudEvents_` or
 * `cloudEvents:` of the AMQP binding, `ce-` or `ce_` as bridges from HTTP and Kafka write them).
 */
const BINARY_PREFIX = /^(?:cloudEvents[_:]|ce[-_])(.+)$/i

/** The attributes of a binary-mode message from its headers; undefined when it has no specversion. */
function binaryAttributes(headers: Record<string, unknown> | undefined): Fields | undefined {
  // Allocates nothing for a structured-mode message (this package's), whose headers have no prefix.
  let attributes: Fields | undefined
  for (const key in headers) {
    const name = BINARY_PREFIX.exec(key)?.[1]
    if (name === undefined) continue
    const value = headers[key]
    attributes ??= {}
    attributes[name.toLowerCase()] = Buffer.isBuffer(value) ? value.toString('utf8') : value
  }
  return attributes !== undefined && 'specversion' in attributes ? attributes : undefined
}

/**
 * The event as attributes and `data`: structured mode (the body is the JSON envelope) or binary mode
 * (attributes in prefixed headers, the body is the data, JSON by its content type). A reason
 * instead when the body is not what its mode needs.
 */
function readEvent(delivery: RawDelivery): Fields | string {
  const contentType = delivery.properties?.contentType
  // The structured mode's content type says the body is the event, whatever headers came along.
  const structured = typeof contentType === 'string' && /^\s*application\/cloudevents/i.test(contentType)
  const attributes = structured ? undefined : binaryAttributes(delivery.properties?.headers)
  let body: unknown
  try {
    body = JSON.parse(delivery.content.toString('utf8'))
  } catch (error) {
    return `body is not JSON: ${(error as Error).message}`
  }
  if (!attributes) return isObject(body) ? body : 'body is not a JSON object'
  attributes.datacontenttype ??= typeof contentType === 'string' ? contentType : undefined
  return { ...attributes, data: body }
}

/** A UTF-16 surrogate not paired with another (with the `u` flag a pair is one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u

/** Problems with the envelope attributes, each as `attribute: what is wrong`; empty when valid. */
function envelopeProblems(body: Fields, expectedType: string): string[] {
  const problems: string[] = []
  const required = (key: string): void => {
    if (text(body, key) === undefined) problems.push(`${key}: missing or not a non-empty string`)
  }
  const optional = (key: string): void => {
    if (body[key] !== undefined && text(body, key) === undefined)
      problems.push(`${key}: not a non-empty string`)
  }
  if (body.specversion !== '1.0') problems.push(`specversion: expected '1.0'`)
  required('id')
  if (text(body, 'id') !== undefined && !UUID.test(body.id as string)) problems.push('id: not a UUID')
  required('source')
  required('type')
  if (text(body, 'type') !== undefined && body.type !== expectedType) {
    problems.push(`type: '${String(body.type)}' is not the handled type '${expectedType}'`)
  }
  optional('time')
  const time = text(body, 'time')
  if (time !== undefined && (!RFC3339.test(time) || Number.isNaN(Date.parse(time))))
    problems.push('time: not RFC 3339')
  // Absent means JSON (the JSON event format, section 3.1); handlers take JSON payloads only.
  const contentType = body.datacontenttype
  if (contentType !== undefined && !(typeof contentType === 'string' && JSON_MEDIA_TYPE.test(contentType)))
    problems.push(`datacontenttype: ${JSON.stringify(contentType)} is not JSON`)
  optional('correlationid')
  optional('causationid')
  optional('traceparent')
  optional('tracestate')
  optional('subject')
  optional('dataschema')
  optional('partitionkey')
  optional('sequence')
  // An ordered handler keys its cursor by both in PostgreSQL text, which holds no U+0000 (such a
  // message could never be handled: poison, not a database outage retried forever) and gets a lone
  // surrogate as U+FFFD (two keys would share a cursor, and a batch's cursor rows would not match
  // its messages). Neither is a Unicode string, as CloudEvents' String type requires.
  for (const key of ['source', 'partitionkey']) {
    const value = text(body, key)
    if (value?.includes('\0')) problems.push(`${key}: holds a NUL character (U+0000)`)
    if (value !== undefined && LONE_SURROGATE.test(value)) problems.push(`${key}: holds a lone surrogate`)
  }
  if (!('data' in body)) problems.push('data: missing')
  return problems
}

const describeIssue = (issue: StandardSchemaV1.Issue): string => {
  const path = (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.')
  return path === '' ? issue.message : `${path}: ${issue.message}`
}

/** `value` as `schema` outputs it, or why it is invalid (`invalid payload: ...`, `payload schema threw: ...`). */
export async function validatePayload<P>(
  schema: StandardSchemaV1<unknown, P>,
  value: unknown,
): Promise<{ value: P } | string> {
  try {
    const result = await schema['~standard'].validate(value)
    return result.issues ? `invalid payload: ${result.issues.map(describeIssue).join('; ')}` : result
  } catch (error) {
    return `payload schema threw: ${(error as Error).message}`
  }
}

/**
 * Turns a delivery into the message a handler sees, or says why it is poison: not a CloudEvents 1.0
 * JSON event in structured or binary mode (`BINARY_PREFIX`), a `type` other than the contract's,
 * data that is not JSON or that the schema rejects (or throws on). No `datacontenttype` is JSON; no
 * `time` is the AMQP timestamp, else now; no `correlationid` is the AMQP correlation id, else
 * `subject`, else `id`. `contract` may be a function of the event's `type` (undefined if none).
 */
export async function parseDelivery<P>(
  delivery: RawDelivery,
  contract: MessageContract<P> | ((type: string | undefined) => MessageContract<P>),
): Promise<ParsedDelivery<P>> {
  const body = readEvent(delivery)
  if (typeof body === 'string') return { ok: false, reason: body }
  const id = text(body, 'id')
  const type = text(body, 'type')
  if (typeof contract === 'function') contract = contract(type)
  const problems = envelopeProblems(body, contract.type)
  if (problems.length > 0) return { ok: false, id, type, reason: `invalid envelope: ${problems.join('; ')}` }

  const result = await validatePayload(contract.schema, body.data)
  if (typeof result === 'string') return { ok: false, id, type, reason: result }
  const envelope = body as unknown as Envelope<unknown>
  return {
    ok: true,
    message: {
      id: envelope.id,
      type: envelope.type,
      source: envelope.source,
      time: timeOf(envelope, delivery),
      subject: envelope.subject,
      correlationId: correlationIdOf(envelope, delivery),
      causationId: envelope.causationid,
      traceparent: envelope.traceparent,
      tracestate: envelope.tracestate,
      routingKey: delivery.routingKey,
      payload: result.value,
      ordering: orderingOf(envelope),
    },
  }
}

/** A decimal sequence number of at most 15 digits after its zero padding (a safe integer). */
const SEQUENCE = /^0*([1-9]\d{0,14})$/

/** The key and number of a sequenced message (`partitionkey` and `sequence`), else undefined. */
function orderingOf(envelope: Envelope<unknown>): { key: string; sequence: number } | undefined {
  const { partitionkey: key, sequence } = envelope
  const digits = sequence === undefined ? null : SEQUENCE.exec(sequence)
  return key && digits ? { key, sequence: Number(digits[1]) } : undefined
}

/**
 * CloudEvents `time`, else the AMQP timestamp (seconds since the epoch), else now; a value that is
 * no real date (a timestamp past the Date range) counts as absent.
 */
function timeOf(envelope: Envelope<unknown>, delivery: RawDelivery): Date {
  // A `time` present was checked to be a real date (envelopeProblems).
  if (envelope.time !== undefined) return new Date(envelope.time)
  const timestamp = delivery.properties?.timestamp
  const stamped = typeof timestamp === 'number' && timestamp > 0 ? new Date(timestamp * 1000) : undefined
  return stamped && Number.isFinite(stamped.getTime()) ? stamped : new Date()
}

/** `correlationid`, else the AMQP correlation id, else `subject`, else the event's id. */
function correlationIdOf(envelope: Envelope<unknown>, delivery: RawDelivery): string {
  const amqp = delivery.properties?.correlationId
  return (
    envelope.correlationid ??
    (typeof amqp === 'string' && amqp !== '' ? amqp : undefined) ??
    envelope.subject ??
    envelope.id
  )
}
