import { z } from 'zod'
import type { EventContract } from './define.js'

/**
 * The JSON Schema (draft 2020-12) of an event's payload, as a producer must write it (zod's
 * `input` view). `$id` is the contract's `dataschema` (`urn:saga:event:<type>`), which every message
 * of the type carries, so a consumer can tell which schema a payload follows. The routing key is
 * said in `$comment`, the vocabulary's own place for notes: a keyword of our own (`x-…`) is one a
 * strict validator refuses (ajv's default `strict` mode throws on unknown keywords).
 */
export const eventJsonSchema = (event: EventContract): Record<string, unknown> => {
  const schema = z.toJSONSchema(event.schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'throw',
  })
  return {
    $schema: schema.$schema,
    $id: event.dataschema,
    $comment: `published with routing key ${event.routingKey}`,
    ...schema,
  }
}

/**
 * The checked-in files of docs/events: file name (`<type>.json`) -> content (2-space JSON plus a
 * trailing newline). The generator writes them; a unit test compares them with the files.
 */
export const eventJsonSchemaFiles = (events: ReadonlyArray<EventContract>): Map<string, string> =>
  new Map(
    events.map((event) => [`${event.type}.json`, `${JSON.stringify(eventJsonSchema(event), null, 2)}\n`]),
  )
