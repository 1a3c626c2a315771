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

/** The event's name in PascalCase from its routing key, e.g. `stock.reservation-failed` -> `StockReservationFailed`. */
const nameOf = (routingKey: string): string =>
  routingKey
    .split(/[.-]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')

/**
 * Declares an event from its versioned type (`<routing key>.v<N>`) and payload schema. The routing
 * key is the type without its version; the schema is titled with the event's name (the routing key
 * in PascalCase) so the generated JSON Schema says what it is.
 * Example: `defineEvent('order.created.v1', schema)` -> routing key `order.created`, title `OrderCreated`.
 */
export const defineEvent = <T extends `${string}.v${number}`, S extends z.ZodType>(
  type: T,
  schema: S,
): EventContract<T, RoutingKeyOf<T>, S> => {
  const routingKey = type.replace(/\.v\d+$/, '') as RoutingKeyOf<T>
  return {
    type,
    routingKey,
    schema: schema.meta({ title: nameOf(routingKey) }),
    dataschema: `urn:saga:event:${type}`,
  }
}
