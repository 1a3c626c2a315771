/**
 * Captures the payload corpus of the compatibility gate: a fleet of its own (the built services as
 * processes, as e2e runs them) takes orders that walk every branch of the saga, and the payload
 * (`data`) of every fact its tap sees is kept, at most `PER_TYPE` distinct ones per event type.
 */
import { allEvents, readsOf, sagaMap } from '@saga/contracts'
import { cancelOrder, orderBody, placeOrder, setStock } from '../api.js'
import { Fleet } from '../fleet.js'
import type { TappedMessage } from '@saga/testkit'

/** Payloads kept per event type: enough to show each branch's reason, few enough to read. */
const PER_TYPE = 3
/** Cancellation races tried before giving up on a ShipmentCancelled (see `cancelAfterReservation`). */
const CANCEL_ATTEMPTS = 30

/** Event type -> the payloads captured for it, in arrival order. */
export type Corpus = Map<string, unknown[]>

/**
 * Starts a fleet, runs the stories (confirmed, declined, out of stock, unsupported country, cancelled
 * by the customer), and returns what the tap saw, grouped by type. Every type of `allEvents` that a
 * reaction of the saga map reads (`readsOf`: the gate judges those consumers by the payloads) must
 * have been seen at least once; a version nobody reads yet (order.created.v2 while every consumer
 * reads v1) is not required, since this fleet's producers publish the versions their defaults name.
 * @throws Error naming the event types no story produced
 */
export async function captureCorpus(say: (line: string) => void): Promise<Corpus> {
  const fleet = await Fleet.start()
  try {
    say(`fleet ${fleet.names.id} ready; placing orders`)
    await runStories(fleet)
    const corpus = groupByType(fleet.tap!.messages)
    const read = new Set(sagaMap.flatMap((reaction) => readsOf(reaction).map((e) => e.type)))
    const missing = allEvents.map((e) => e.type).filter((type) => read.has(type) && !corpus.has(type))
    if (missing.length > 0) throw new Error(`no story produced ${missing.join(', ')}`)
    return corpus
  } finally {
    await fleet.stop()
  }
}

/** Waits until the tap saw `routingKey` for `orderId`. */
const seen = (fleet: Fleet, orderId: string, routingKey: string) =>
  fleet.tap!.waitFor(
    (m) => m.correlationId === orderId && m.routingKey === routingKey,
    30_000,
    `${routingKey} of order ${orderId}`,
  )

async function runStories(fleet: Fleet): Promise<void> {
  const orderUrl = fleet.one('order').url
  const inventory = fleet.one('inventory').url
  await setStock(inventory, 'CORPUS-MUG', 1_000)
  await setStock(inventory, 'CORPUS-LAMP', 0)
  const stories: Array<[ReturnType<typeof orderBody>, string[]]> = [
    [orderBody([{ sku: 'CORPUS-MUG', quantity: 2 }]), ['order.confirmed']],
    [orderBody([{ sku: 'CORPUS-MUG', quantity: 1 }], { currency: 'JPY' }), ['order.confirmed']],
    [
      orderBody([{ sku: 'CORPUS-MUG', quantity: 1 }], { paymentMethod: 'tok_chargeDeclined' }),
      ['order.cancelled'],
    ],
    [orderBody([{ sku: 'CORPUS-LAMP', quantity: 2 }]), ['order.cancelled', 'payment.refunded']],
    [
      orderBody([{ sku: 'CORPUS-MUG', quantity: 1 }], { country: 'AQ' }),
      ['payment.refunded', 'stock.released'],
    ],
  ]
  for (const [body, ends] of stories) {
    const { order } = await placeOrder(orderUrl, body)
    for (const key of ends) await seen(fleet, order.id, key)
  }
  await cancelAfterReservation(fleet)
}

/**
 * A ShipmentCancelled needs a customer's cancellation to reach the order service after the shipment
 * was created but before its ShipmentCreated confirmed the order: a race by nature. Each attempt
 * cancels as soon as the stock is reserved, until one ends with a cancelled shipment.
 */
async function cancelAfterReservation(fleet: Fleet): Promise<void> {
  const orderUrl = fleet.one('order').url
  for (let attempt = 1; attempt <= CANCEL_ATTEMPTS; attempt++) {
    const { order } = await placeOrder(orderUrl, orderBody([{ sku: 'CORPUS-MUG', quantity: 1 }]))
    await seen(fleet, order.id, 'stock.reserved')
    const { status } = await cancelOrder(orderUrl, order.id)
    if (status === 409) continue
    await seen(fleet, order.id, 'stock.released')
    const chain = fleet.tap!.chain(order.id).map((m) => m.routingKey)
    if (chain.includes('shipment.created')) {
      await seen(fleet, order.id, 'shipment.cancelled')
      return
    }
  }
  throw new Error(`no ShipmentCancelled after ${CANCEL_ATTEMPTS} cancellations raced with a shipment`)
}

/** The tapped payloads by AMQP type, at most `PER_TYPE` per type, duplicates (redeliveries) dropped. */
function groupByType(messages: readonly TappedMessage[]): Corpus {
  const corpus: Corpus = new Map()
  const kept = new Set<string>()
  for (const message of messages) {
    const data = (message.body as { data?: unknown }).data
    if (message.type === undefined || data === undefined) continue
    const list = corpus.get(message.type) ?? []
    const text = JSON.stringify(data)
    if (list.length >= PER_TYPE || kept.has(text)) continue
    kept.add(text)
    list.push(data)
    corpus.set(message.type, list)
  }
  return corpus
}
