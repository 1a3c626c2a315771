import type { ConsumedMessage, Envelope, MessageContract, StandardSchemaV1 } from '../types.js'

/** What a delivery turned into: a message the handler can take, or the reason it is poison. */
export type ParsedDelivery<P> =
  | { ok: true; message: Omit<ConsumedMessage<P>, 'attempt'> }
  | { ok: false; reason: string; id?: string | undefined; type?: string | undefined }

/** What `parseDelivery` reads from an AMQP delivery. */
export interface RawDelivery {
  content: Buffer
  routingKey: string
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
  required('time')
  if (text(body, 'time') !== undefined && !RFC3339.test(body.time as string))
    problems.push('time: not RFC 3339')
  if (body.datacontenttype !== 'application/json')
    problems.push(`datacontenttype: expected 'application/json'`)
  required('correlationid')
  optional('causationid')
  optional('traceparent')
  optional('subject')
  optional('dataschema')
  if (!('data' in body)) problems.push('data: missing')
  return problems
}

const describeIssue = (issue: StandardSchemaV1.Issue): string => {
  const path = (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.')
  return path === '' ? issue.message : `${path}: ${issue.message}`
}

/**
 * Turns a delivery into the message a handler sees, or says why it is poison: not JSON, not a
 * CloudEvents 1.0 structured envelope (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md)
 * with our extensions, a `type` other than the contract's (another version is another type),
 * or `data` the contract's schema rejects. A schema that throws is treated as rejecting.
 */
export async function parseDelivery<P>(
  delivery: RawDelivery,
  contract: MessageContract<P>,
): Promise<ParsedDelivery<P>> {
  let body: unknown
  try {
    body = JSON.parse(delivery.content.toString('utf8'))
  } catch (error) {
    return { ok: false, reason: `body is not JSON: ${(error as Error).message}` }
  }
  if (!isObject(body)) return { ok: false, reason: 'body is not a JSON object' }
  const id = text(body, 'id')
  const type = text(body, 'type')
  const problems = envelopeProblems(body, contract.type)
  if (problems.length > 0) return { ok: false, id, type, reason: `invalid envelope: ${problems.join('; ')}` }

  let result: StandardSchemaV1.Result<P>
  try {
    result = await contract.schema['~standard'].validate(body.data)
  } catch (error) {
    return { ok: false, id, type, reason: `payload schema threw: ${(error as Error).message}` }
  }
  if (result.issues) {
    return { ok: false, id, type, reason: `invalid payload: ${result.issues.map(describeIssue).join('; ')}` }
  }
  const envelope = body as unknown as Envelope<unknown>
  return {
    ok: true,
    message: {
      id: envelope.id,
      type: envelope.type,
      source: envelope.source,
      time: new Date(envelope.time),
      subject: envelope.subject,
      correlationId: envelope.correlationid,
      causationId: envelope.causationid,
      traceparent: envelope.traceparent,
      routingKey: delivery.routingKey,
      payload: result.value,
    },
  }
}
