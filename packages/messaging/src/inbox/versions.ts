import type { Message } from 'amqplib'
import { errorMessage } from '../errors.js'
import { TopologyError } from '../topology.js'
import type { HandlerDefinition, MessageContract, TransactionClient, Upcaster } from '../types.js'
import type { DeliveryControl, DeliveryRuntime } from './handle-delivery.js'
import { parseDelivery, validatePayload, type ParsedDelivery, type RawDelivery } from './parse-delivery.js'
import { pause } from './retry-policy.js'

/**
 * 1 when `type` is a newer version of `known`'s event (types named `<name>.v<N>`, e.g.
 * `order.created.v2`), -1 an older one, 0 another event or a type without a version.
 */
export function versionOrder(type: string, known: string): number {
  const [a, b] = [type, known].map((name) => /^(.+)\.v(\d+)$/.exec(name))
  return a && b && a[1] === b[1] ? Math.sign(Number(a[2]) - Number(b[2])) : 0
}

/** A schema that takes any payload as it is: for a version whose schema this process does not know. */
export const anyPayload: MessageContract['schema'] = {
  '~standard': { version: 1, vendor: 'saga-messaging', validate: (value) => ({ value }) },
}

/**
 * The routing key a message was published with: a copy put back through the default exchange
 * (a held one, see `holdNewer`) carries it in `x-original-routing-key`.
 */
export function routingKeyOf(delivery: Message): string {
  const key: unknown = delivery.properties.headers?.['x-original-routing-key']
  return delivery.fields.exchange === '' && typeof key === 'string' ? key : delivery.fields.routingKey
}

/**
 * Checks `handler.upcasts`. @throws TopologyError for an upcaster from the handler's own type, two
 * from one type, or one whose routing key is not the handler's (it would never reach this queue).
 */
export function checkUpcasts(handler: HandlerDefinition<never>): void {
  const { type, routingKey } = handler.message
  const seen = new Set<string>([type])
  for (const { from } of handler.upcasts ?? []) {
    const where = `handler '${handler.name}': upcaster from '${from.type}'`
    if (seen.has(from.type))
      throw new TopologyError(`${where}: ${from.type === type ? "that is the handler's own type" : 'twice'}`)
    if (from.routingKey !== routingKey)
      throw new TopologyError(`${where}: routing key '${from.routingKey}', not the handler's '${routingKey}'`)
    seen.add(from.type)
  }
}

/**
 * `parsed` (a delivery parsed by `upcaster.from`) upcast and validated with `contract`; each failure
 * is poison with a reason naming its step. The message keeps its id and wire type.
 */
async function upcast<P>(
  parsed: ParsedDelivery<unknown>,
  upcaster: Upcaster<P>,
  contract: MessageContract<P>,
): Promise<ParsedDelivery<P>> {
  const step = `upcast from '${upcaster.from.type}' to '${contract.type}'`
  if (!parsed.ok) return { ...parsed, reason: `${step}: ${parsed.reason}` }
  const { id, type } = parsed.message
  let payload: P
  try {
    payload = upcaster.upcast(parsed.message.payload)
  } catch (error) {
    return { ok: false, id, type, reason: `${step}: upcaster threw: ${errorMessage(error)}` }
  }
  const result = await validatePayload(contract.schema, payload)
  if (typeof result === 'string') return { ok: false, id, type, reason: `${step}: its result: ${result}` }
  return { ok: true, message: { ...parsed.message, payload: result.value } }
}

/**
 * `parseDelivery` for `handler`, with versions, in one parse: a delivery of an older version is
 * parsed by the upcaster from its type and upcast (else poison: no upcaster); a valid envelope of a
 * newer version of the event is `newer` (to hold); any other type is poison as `parseDelivery` says.
 */
export async function parseForHandler<P>(
  raw: RawDelivery,
  handler: HandlerDefinition<never, P>,
): Promise<ParsedDelivery<P> | { ok: 'newer'; id: string; type: string }> {
  const own: MessageContract<unknown> = handler.message
  let upcaster: Upcaster<P> | undefined
  let order = 0
  const parsed = await parseDelivery(raw, (type) => {
    // Only a delivery of another type pays for the version checks.
    if (type === undefined || type === own.type) return own
    upcaster = handler.upcasts?.find((candidate) => candidate.from.type === type)
    if (upcaster) return upcaster.from
    order = versionOrder(type, own.type)
    return order > 0 ? { ...own, type, schema: anyPayload } : own
  })
  if (upcaster) return upcast(parsed, upcaster, handler.message)
  if (order > 0 && parsed.ok) return { ok: 'newer', id: parsed.message.id, type: parsed.message.type }
  if (order < 0 && !parsed.ok)
    return { ...parsed, reason: `no upcaster from '${parsed.type}' to '${own.type}'` }
  return parsed
}

/** How often a message was held, on the copy put back. */
const HELD_TIMES = 'x-held-times'

/** The hold before the `times`th offer again: 1 s, doubling, at most 60 s. */
export const holdDelayMs = (times: number): number => Math.min(1000 * 2 ** (times - 1), 60_000)

/**
 * Holds a delivery of a newer version than the handler's for a consumer that handles it (a newer
 * build rolling out), instead of dead-lettering it; a `nack(requeue)` loop would spend the quorum
 * queue's `x-delivery-limit`. It waits `holdDelayMs` (no slot, no batch), then a copy with the same
 * properties and id goes back into the queue, confirmed, and the original is acked (a channel dying
 * in between brings both back: the inbox dedups). Stopping requeues it at once. Never throws.
 */
export async function holdNewer<Tx extends TransactionClient>(
  delivery: Message,
  held: { id: string; type: string },
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
): Promise<void> {
  const { handler, counters, logger, signals, stopping } = runtime
  const before: unknown = delivery.properties.headers?.[HELD_TIMES]
  const times = (typeof before === 'number' ? before : 0) + 1
  const fields = { messageId: held.id, type: held.type, handler: handler.name, times }
  counters.heldTotal += 1
  counters.held += 1
  logger.warn(fields, 'newer version of the message held for a consumer that handles it')
  signals.emit('held', { id: held.id, type: held.type, handler: handler.name, times })
  try {
    if (!(await pause(holdDelayMs(times), stopping))) return control.requeue()
    await control.putBack({ [HELD_TIMES]: times, 'x-original-routing-key': routingKeyOf(delivery) })
    control.ack()
  } catch (error) {
    logger.warn({ ...fields, err: error }, 'putting a held message back failed; requeueing it')
    control.requeue()
  } finally {
    counters.held -= 1
  }
}
