import type { z } from 'zod'

/**
 * One event of the chain: its versioned type, the routing key it is published under and the zod
 * schema of its payload. Structurally a `MessageContract` of @saga/messaging (zod 4 schemas
 * implement Standard Schema), without this package depending on messaging.
 */
export interface EventContract<
  T extends string = string,
  K extends string = string,
  S extends z.ZodType = z.ZodType,
> {
  /** Versioned type name, e.g. `order.created.v1`. */
  readonly type: T
  /** Topic routing key, e.g. `order.created`. */
  readonly routingKey: K
  /** Payload schema; parse with it, or hand the contract to messaging which validates through it. */
  readonly schema: S
  /**
   * The URI of the payload's JSON Schema: its `$id` in docs/events (`urn:saga:event:<type>`), and
   * the CloudEvents `dataschema` every message of the type carries.
   */
  readonly dataschema: string
}

/** The payload type of an event contract, e.g. `EventPayload<typeof OrderCreated>`. */
export type EventPayload<C extends EventContract> = z.output<C['schema']>

/** The routing key of a versioned type: the type without its `.vN` suffix, e.g. `order.created`. */
export type RoutingKeyOf<T extends string> = T extends `${infer K}.v${number}` ? K : never

/**
 * The event's name in PascalCase from its versioned type: the routing key's words, with `V<N>` after
 * them from version 2 on, so two versions of one event get distinct names in generated documents and
 * models. E.g. `stock.reservation-failed.v1` -> `StockReservationFailed`, `order.created.v2` ->
 * `OrderCreatedV2`.
 */
export const eventNameOf = (type: string): string => {
  const version = /\.v(\d+)$/.exec(type)?.[1]
  const name = type
    .replace(/\.v\d+$/, '')
    .split(/[.-]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')
  return version === undefined || version === '1' ? name : `${name}V${version}`
}

/**
 * Declares an event from its versioned type (`<routing key>.v<N>`) and payload schema. The routing
 * key is the type without its version; the schema is titled with the event's name (`eventNameOf`)
 * so the generated JSON Schema says what it is.
 * Example: `defineEvent('order.created.v1', schema)` -> routing key `order.created`, title `OrderCreated`;
 * `defineEvent('order.created.v2', schema)` -> the same routing key, title `OrderCreatedV2`.
 */
export const defineEvent = <T extends `${string}.v${number}`, S extends z.ZodType>(
  type: T,
  schema: S,
): EventContract<T, RoutingKeyOf<T>, S> => {
  const routingKey = type.replace(/\.v\d+$/, '') as RoutingKeyOf<T>
  return {
    type,
    routingKey,
    schema: schema.meta({ title: eventNameOf(type) }),
    dataschema: `urn:saga:event:${type}`,
  }
}

/**
 * How a consumer on a newer version of an event reads an older one: `from` is the older contract
 * (the payload is validated by `from.schema`), `upcast` turns its parsed payload into the newer
 * version's payload (`P`), which the consumer's own schema validates again. Pure: no I/O, no clock,
 * no randomness, so every consumer upcasts a message the same way however often it is redelivered.
 * Structurally the `Upcaster` of @saga/messaging's `HandlerDefinition.upcasts`, without this package
 * depending on messaging. Example: `OrderCreatedV1toV2 = { from: OrderCreatedV1, upcast:
 * upcastOrderCreatedV1toV2 }`; in the saga map, `alsoReads: [OrderCreatedV1toV2]`.
 */
export interface EventUpcaster<P = unknown, O = unknown> {
  /** The older version the upcaster reads, e.g. `order.created.v1`. */
  readonly from: EventContract<string, string, z.ZodType<O>>
  /** The older payload (parsed by `from.schema`) as the newer version's payload. */
  upcast(payload: O): P
}
