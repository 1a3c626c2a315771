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

/**
 * Declares an event. The schema is titled with `name` so the generated JSON Schema says what it is.
 * Example: `defineEvent('OrderCreated', 'order.created.v1', 'order.created', schema)`.
 */
export const defineEvent = <T extends string, K extends string, S extends z.ZodType>(
  name: string,
  type: T,
  routingKey: K,
  schema: S,
): EventContract<T, K, S> => ({
  type,
  routingKey,
  schema: schema.meta({ title: name }),
  dataschema: `urn:saga:event:${type}`,
})
