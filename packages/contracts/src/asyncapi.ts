import { z } from 'zod'
import { eventNameOf, type EventContract } from './define.js'
import { producers, readsOf, sagaMap, SERVICES, type Reaction } from './saga-map.js'

// PascalCase message ids from versioned types: `stock.reservation-failed.v1` -> `StockReservationFailed`,
// `order.created.v2` -> `OrderCreatedV2` (versions of one event share its channel, each its own message).
const messageId = (event: EventContract): string => eventNameOf(event.type)

const channelRef = (event: EventContract) => ({ $ref: `#/channels/${event.routingKey}` })
const messageRef = (event: EventContract) => ({
  $ref: `#/channels/${event.routingKey}/messages/${messageId(event)}`,
})

/**
 * The id of the `receive` operation of one saga-map entry: `<service>.<handler>`; for a batch
 * recorder, which takes several facts on one queue and AsyncAPI 3 gives an operation one channel,
 * `<service>.<handler>.<routing key>`.
 */
export const receiveOperationId = (reaction: Reaction): string =>
  reaction.recorder === true
    ? `${reaction.service}.${reaction.handler}.${reaction.reactsTo.routingKey}`
    : `${reaction.service}.${reaction.handler}`

type Schema = Record<string, unknown>

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1)

/**
 * `schema` with a `title` on every nested object and enum that has none, made of the path from
 * `name` (`OrderCreated.shippingAddress` -> `OrderCreatedShippingAddress`, an array's items
 * `...Item`), so a model generator names each type after where it is.
 */
function titled(schema: Schema, name: string): Schema {
  const named = schema.title === undefined && (schema.properties !== undefined || schema.enum !== undefined)
  const out: Schema = named ? { title: name, ...schema } : { ...schema }
  if (typeof schema.properties === 'object' && schema.properties !== null)
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([key, value]) => [
        key,
        titled(value, `${name}${pascal(key)}`),
      ]),
    )
  if (typeof schema.items === 'object' && schema.items !== null)
    out.items = titled(schema.items as Schema, `${name}Item`)
  return out
}

/**
 * The wire body of `event`: a CloudEvents 1.0 structured-mode envelope (packages/messaging README,
 * "Wire format") whose `data` is the event's payload schema (JSON Schema draft-07, zod's input view,
 * which AsyncAPI's default schema format takes as it is). The envelope is titled `<Message>Envelope`
 * and the data keeps the event's title, so model generators (Modelina) name both instead of making
 * `AnonymousSchema_<n>` of them.
 */
const envelopeSchema = (event: EventContract): Record<string, unknown> => {
  const { $schema: _dialect, ...data } = z.toJSONSchema(event.schema, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'throw',
  })
  return {
    title: `${messageId(event)}Envelope`,
    type: 'object',
    required: ['specversion', 'id', 'source', 'type', 'time', 'datacontenttype', 'correlationid', 'data'],
    properties: {
      specversion: { const: '1.0' },
      id: { type: 'string', format: 'uuid', description: 'The outbox row id (UUIDv7); AMQP messageId.' },
      source: { type: 'string', description: 'The producing service.' },
      type: { const: event.type },
      time: { type: 'string', format: 'date-time' },
      subject: { type: 'string', description: 'The aggregate id (the order id).' },
      datacontenttype: { const: 'application/json' },
      dataschema: { const: event.dataschema, description: 'The URI of the JSON Schema of data.' },
      correlationid: { type: 'string', description: 'The order id: every message of one saga.' },
      causationid: { type: 'string', description: 'The id of the message that caused this one.' },
      traceparent: { type: 'string', description: 'W3C trace context of the producer span.' },
      tracestate: { type: 'string', description: 'W3C tracestate beside traceparent, when there is one.' },
      data: titled(data, messageId(event)),
    },
  }
}

/**
 * The AMQP content type messages go out with: a structured-mode CloudEvent (the CloudEvents AMQP
 * binding), what @saga/messaging's relay sets.
 */
const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8'

/** Options of `asyncApiDocument`. */
export interface AsyncApiOptions {
  /** The topic exchange, default `saga.events` (AMQP_EXCHANGE). */
  exchange?: string
  /** Broker host:port of the `rabbitmq` server entry, default `localhost:5672`. */
  host?: string
}

/**
 * The AsyncAPI 3.0 document of the fleet, derived from the contracts and the saga map (the one
 * truth of who sends and who receives): a channel per routing key on the topic exchange, a `send`
 * operation per producing service and fact, a `receive` operation per handler (its queue
 * `<service>.<handler>` in the AMQP binding), each message's payload the CloudEvents envelope with
 * the event's JSON Schema as `data`, and the envelope's common parts as the `CloudEvent` trait.
 * `docs/asyncapi.json` is this document; a unit test validates it with @asyncapi/parser and
 * compares it with the file.
 */
export function asyncApiDocument(events: readonly EventContract[], options: AsyncApiOptions = {}) {
  const exchange = {
    name: options.exchange ?? 'saga.events',
    type: 'topic',
    durable: true,
    autoDelete: false,
  }
  const { channels, messages } = channelsAndMessages(events, exchange)
  return {
    // 3.0.0, not 3.1.0: Modelina 5.10 reads a 3.1.0 document as one `Root` model.
    asyncapi: '3.0.0',
    info: {
      title: 'Order saga fleet events',
      version: '1.0.0',
      description:
        'Facts the four services publish through their transactional outboxes and consume through their inboxes (generated from packages/contracts).',
    },
    defaultContentType: CLOUDEVENTS_CONTENT_TYPE,
    servers: {
      rabbitmq: { host: options.host ?? 'localhost:5672', protocol: 'amqp', protocolVersion: '0.9.1' },
    },
    channels,
    operations: { ...sendOperations(), ...receiveOperations() },
    components: { messages, messageTraits: { CloudEvent: CLOUD_EVENT_TRAIT } },
  }
}

/**
 * A channel per routing key on `exchange`, with a message per version of the event published under
 * it (`order.created`: `OrderCreated` for v1, `OrderCreatedV2`), each the envelope as payload.
 */
function channelsAndMessages(events: readonly EventContract[], exchange: { name: string }) {
  const channels: Record<
    string,
    { description: string; messages: Record<string, unknown>; [key: string]: unknown }
  > = {}
  const messages: Record<string, unknown> = {}
  for (const event of events) {
    const id = messageId(event)
    messages[id] = {
      name: event.type,
      title: id,
      contentType: CLOUDEVENTS_CONTENT_TYPE,
      traits: [{ $ref: '#/components/messageTraits/CloudEvent' }],
      payload: envelopeSchema(event),
    }
    const ref = { $ref: `#/components/messages/${id}` }
    const channel = channels[event.routingKey]
    if (channel !== undefined) {
      channel.messages[id] = ref
      channel.description = channel.description.replace(' on the ', ` or ${event.type} on the `)
      continue
    }
    channels[event.routingKey] = {
      address: event.routingKey,
      description: `${event.type} on the ${exchange.name} topic exchange, routing key ${event.routingKey}.`,
      messages: { [id]: ref },
      bindings: { amqp: { is: 'routingKey', exchange, bindingVersion: '0.3.0' } },
    }
  }
  return { channels, messages }
}

/**
 * A `send` operation per producing service and routing key (saga map's `producers`), with every
 * version the service may publish under it as a message.
 */
function sendOperations(): Record<string, unknown> {
  const operations: Record<string, { summary: string; messages: unknown[]; [key: string]: unknown }> = {}
  for (const service of SERVICES) {
    for (const event of producers[service]) {
      const id = `${service}.send.${event.routingKey}`
      const known = operations[id]
      if (known !== undefined) {
        known.messages.push(messageRef(event))
        known.summary = known.summary.replace(' from its outbox', ` or ${event.type} from its outbox`)
        continue
      }
      operations[id] = {
        action: 'send',
        summary: `${service} publishes ${event.type} from its outbox (publisher confirms, mandatory).`,
        channel: channelRef(event),
        messages: [messageRef(event)],
        bindings: { amqp: { deliveryMode: 2, mandatory: true, bindingVersion: '0.3.0' } },
      }
    }
  }
  return operations
}

/**
 * A `receive` operation per handler and recorder of `reactions` (default the saga map), with every
 * version it reads as a message (`readsOf`: the one it reacts to, then those it upcasts).
 */
export function receiveOperations(reactions: readonly Reaction[] = sagaMap): Record<string, unknown> {
  const operations: Record<string, unknown> = {}
  for (const reaction of reactions) {
    const emits = reaction.mayEmit.map((e) => e.type).join(' or ')
    const how = reaction.recorder === true ? ', a batch recorder (no inbox transaction, emits nothing)' : ''
    const upcasts = (reaction.alsoReads ?? []).map((u) => u.from.type).join(' and ')
    const reads = upcasts ? `, also reads ${upcasts} (upcast to ${reaction.reactsTo.type})` : ''
    operations[receiveOperationId(reaction)] = {
      action: 'receive',
      summary: `${reaction.service} ${reaction.handler}: queue ${reaction.service}.${reaction.handler}${how}${reads}${emits ? `, may emit ${emits}` : ''}.`,
      channel: channelRef(reaction.reactsTo),
      messages: readsOf(reaction).map(messageRef),
    }
  }
  return operations
}

/** The envelope's common parts: CloudEvents structured mode and the AMQP headers beside it. */
const CLOUD_EVENT_TRAIT = {
  summary: 'CloudEvents 1.0 structured mode; AMQP messageId = id, type, correlationId, persistent.',
  correlationId: { location: '$message.payload#/correlationid' },
  headers: {
    type: 'object',
    properties: {
      'causation-id': { type: 'string' },
      traceparent: { type: 'string' },
      tracestate: { type: 'string' },
    },
  },
}
