/**
 * The saga map: the one place that says which service produces which fact, which handler of which
 * service reacts to which fact, and what it may emit. Each service's `src/reactions/index.ts` must
 * register exactly `reactionsOf(service)` (a unit test per service checks it); the order CLI's
 * `where` and `dlq list`, and e2e's expected facts, are derived from it.
 */
import type { EventContract, EventUpcaster } from './define.js'
import {
  FailedStep,
  OrderCancelled,
  OrderConfirmed,
  OrderCreated,
  OrderCreatedV1toV2,
  OrderCreatedV2,
} from './order.js'
import { PaymentFailed, PaymentProcessed, PaymentRefunded } from './payment.js'
import { StockReleased, StockReservationFailed, StockReserved } from './inventory.js'
import { ShipmentCancelled, ShipmentCreated, ShipmentFailed } from './shipment.js'

/** The four services of the fleet, in chain order. */
export const SERVICES = ['order', 'payment', 'inventory', 'shipment'] as const
/** One service of the fleet. */
export type ServiceName = (typeof SERVICES)[number]

/**
 * Which service publishes each fact (its outbox holds them). Every version a service may publish is
 * listed: the order service publishes `order.created.v1` or `.v2` as its ORDER_CREATED_VERSION says.
 */
export const producers: Readonly<Record<ServiceName, readonly EventContract[]>> = {
  order: [OrderCreated, OrderCreatedV2, OrderConfirmed, OrderCancelled],
  payment: [PaymentProcessed, PaymentFailed, PaymentRefunded],
  inventory: [StockReserved, StockReservationFailed, StockReleased],
  shipment: [ShipmentCreated, ShipmentFailed, ShipmentCancelled],
}

/**
 * One handler (and one queue, `<prefix>.<handler>`) of one service. `mayEmit` lists the facts its
 * transaction may enqueue, as alternatives: exactly one of them per handled message when the step
 * goes through, success first and failure second for a decision (payment, stock, shipment); empty for
 * a handler that only records (the order timeline). `recorder: true` marks a fact the service only
 * records through a batch recorder: several facts share its handler name and queue, and it runs no
 * inbox transaction per message (packages/messaging README, "Batch recorder"). `undoIfAny: true` marks
 * an undo step that emits its fact only when the service did something for the order that is still
 * to be undone (a capture not yet refunded, a reservation not yet released, a live shipment), and
 * nothing otherwise; such facts are not expected in a saga's walk (`nextAfter`, `sagaFacts`).
 * `alsoReads` lists the upcasters through which the handler also reads older versions of its fact
 * (each `from` has `reactsTo`'s routing key, so the messages reach the same queue); `readsOf` lists
 * every type a reaction reads.
 */
export interface Reaction {
  service: ServiceName
  handler: string
  reactsTo: EventContract
  mayEmit: readonly EventContract[]
  recorder?: true
  undoIfAny?: true
  alsoReads?: readonly EventUpcaster[]
}

/**
 * Every contract `reaction` reads: the version it reacts to, then each older version it upcasts
 * (`alsoReads`), e.g. `[OrderCreatedV2, OrderCreatedV1]` for a reaction to v2 with
 * `alsoReads: [OrderCreatedV1toV2]`.
 */
export const readsOf = (reaction: Reaction): EventContract[] => [
  reaction.reactsTo,
  ...(reaction.alsoReads ?? []).map((upcaster) => upcaster.from),
]

/**
 * What is wrong with a reaction's upcasters, one sentence each (empty when nothing): an upcaster
 * from another routing key (its messages never reach the handler's queue), or from the very type
 * the reaction reacts to, or two upcasters from one type. A unit test holds the saga map to it.
 */
export function upcasterProblems(reaction: Reaction): string[] {
  const problems: string[] = []
  const seen = new Set<string>()
  for (const { from } of reaction.alsoReads ?? []) {
    const who = `${reaction.service}/${reaction.handler}`
    if (from.routingKey !== reaction.reactsTo.routingKey)
      problems.push(`${who} upcasts ${from.type}, not a version of ${reaction.reactsTo.routingKey}`)
    if (from.type === reaction.reactsTo.type) problems.push(`${who} upcasts ${from.type} to itself`)
    if (seen.has(from.type)) problems.push(`${who} has two upcasters from ${from.type}`)
    seen.add(from.type)
  }
  return problems
}

const recordTimeline = (fact: EventContract): Reaction => ({
  service: 'order',
  handler: 'record-timeline',
  reactsTo: fact,
  mayEmit: [],
  recorder: true,
})

/**
 * Every reaction of the fleet (the chain in README.md and docs/architecture.md). The order service also records the facts it
 * does not react to in each order's timeline, and consumes its own terminal facts (the relay publishes
 * with `mandatory`, so a fact without a queue would be returned and parked).
 */
export const sagaMap: readonly Reaction[] = [
  {
    service: 'payment',
    handler: 'process-payment-when-order-created',
    reactsTo: OrderCreatedV2,
    alsoReads: [OrderCreatedV1toV2],
    mayEmit: [PaymentProcessed, PaymentFailed],
  },
  {
    service: 'inventory',
    handler: 'reserve-stock-when-payment-processed',
    reactsTo: PaymentProcessed,
    mayEmit: [StockReserved, StockReservationFailed],
  },
  {
    service: 'shipment',
    handler: 'create-shipment-when-stock-reserved',
    reactsTo: StockReserved,
    mayEmit: [ShipmentCreated, ShipmentFailed],
  },
  {
    service: 'order',
    handler: 'confirm-order-when-shipment-created',
    reactsTo: ShipmentCreated,
    mayEmit: [OrderConfirmed],
  },
  {
    service: 'order',
    handler: 'cancel-order-when-payment-failed',
    reactsTo: PaymentFailed,
    mayEmit: [OrderCancelled],
  },
  {
    service: 'order',
    handler: 'cancel-order-when-stock-reservation-failed',
    reactsTo: StockReservationFailed,
    mayEmit: [OrderCancelled],
  },
  {
    service: 'order',
    handler: 'cancel-order-when-shipment-failed',
    reactsTo: ShipmentFailed,
    mayEmit: [OrderCancelled],
  },
  {
    service: 'payment',
    handler: 'refund-payment-when-stock-reservation-failed',
    reactsTo: StockReservationFailed,
    mayEmit: [PaymentRefunded],
  },
  {
    service: 'payment',
    handler: 'refund-payment-when-shipment-failed',
    reactsTo: ShipmentFailed,
    mayEmit: [PaymentRefunded],
  },
  {
    service: 'inventory',
    handler: 'release-stock-when-shipment-failed',
    reactsTo: ShipmentFailed,
    mayEmit: [StockReleased],
  },
  {
    service: 'payment',
    handler: 'refund-payment-when-order-cancelled',
    reactsTo: OrderCancelled,
    mayEmit: [PaymentRefunded],
    undoIfAny: true,
  },
  {
    service: 'inventory',
    handler: 'release-stock-when-order-cancelled',
    reactsTo: OrderCancelled,
    mayEmit: [StockReleased],
    undoIfAny: true,
  },
  {
    service: 'shipment',
    handler: 'cancel-shipment-when-order-cancelled',
    reactsTo: OrderCancelled,
    mayEmit: [ShipmentCancelled],
    undoIfAny: true,
  },
  recordTimeline(PaymentProcessed),
  recordTimeline(StockReserved),
  recordTimeline(PaymentRefunded),
  recordTimeline(StockReleased),
  recordTimeline(ShipmentCancelled),
  recordTimeline(OrderConfirmed),
  recordTimeline(OrderCancelled),
]

/** The fact that starts every saga (`POST /orders`). */
export const firstFact: EventContract = OrderCreated
/** The facts that end an order: after one of them the order's status never changes. */
export const terminalFacts: readonly EventContract[] = [OrderConfirmed, OrderCancelled]

/**
 * Which service takes the decision that `OrderCancelled.failedStep` names (for `deadline_exceeded`,
 * the service the order was waiting for).
 */
export const failedStepService: Readonly<Record<FailedStep, ServiceName>> = {
  payment: 'payment',
  stock: 'inventory',
  shipment: 'shipment',
}

/** The reactions of one service, in map order: what its `reactions/index.ts` registers (handlers and recorders). */
export const reactionsOf = (service: ServiceName): Reaction[] => sagaMap.filter((r) => r.service === service)

/**
 * The service that publishes `routingKey` (e.g. `stock.reserved` -> `inventory`).
 * @throws Error when no service of the map produces it
 */
export function producerOf(routingKey: string): ServiceName {
  const service = SERVICES.find((s) => producers[s].some((e) => e.routingKey === routingKey))
  if (service === undefined) throw new Error(`no service of the saga map produces '${routingKey}'`)
  return service
}

/** A step an order waits for: `service` must publish one of the routing keys in `oneOf`. */
export interface Expected {
  service: ServiceName
  oneOf: string[]
}

/**
 * What must follow `routingKey` in a saga: one entry per reaction that emits, with the routing keys
 * it may emit. Empty for a fact nobody acts on (a terminal fact, a compensation).
 */
export const nextAfter = (routingKey: string): Expected[] =>
  sagaMap
    .filter((r) => r.reactsTo.routingKey === routingKey && r.mayEmit.length > 0 && r.undoIfAny !== true)
    .map((r) => ({ service: r.service, oneOf: r.mayEmit.map((e) => e.routingKey) }))

/**
 * The routing keys of a complete saga, derived by walking the map from `firstFact`: every decision
 * takes its success, except the decision of `failedStep`'s service, which takes its failure. Without a
 * failed step the walk is the confirmed saga. In the order the facts are first reached. Undo steps
 * that act only if there is something to undo (`undoIfAny`) are not walked: a saga cancelled by its
 * deadline or its customer has no fixed list of facts, and e2e judges it by its books instead.
 */
export function sagaFacts(failedStep?: FailedStep): string[] {
  const failing = failedStep === undefined ? undefined : failedStepService[failedStep]
  const facts: string[] = [firstFact.routingKey]
  for (let i = 0; i < facts.length; i++) {
    for (const reaction of sagaMap) {
      if (reaction.reactsTo.routingKey !== facts[i] || reaction.mayEmit.length === 0) continue
      if (reaction.undoIfAny === true) continue
      const pick = reaction.mayEmit.length > 1 && reaction.service === failing ? 1 : 0
      const next = reaction.mayEmit[pick]?.routingKey
      if (next !== undefined && !facts.includes(next)) facts.push(next)
    }
  }
  return facts
}

/**
 * A step still ahead of a saga: `service`'s `handler` is to react to `reactsTo` (a routing key) with
 * one of `oneOf` (success first, then failure). `waiting`: `reactsTo` has occurred, so the step can
 * run now and the saga waits for it; otherwise it follows a step ahead, whose success fact it reacts to.
 */
export interface StepAhead extends Expected {
  handler: string
  reactsTo: string
  waiting: boolean
}

/**
 * Whether an undo step (`undoIfAny`) may have something to undo: its service published a fact of the
 * confirmed walk for the order (a capture, a reservation, a shipment).
 */
const owesUndo = (reaction: Reaction, seen: ReadonlySet<string>, forward: ReadonlySet<string>): boolean =>
  producers[reaction.service].some((e) => forward.has(e.routingKey) && seen.has(e.routingKey))

/**
 * What is left of one saga, from the saga map and the routing keys of the facts it has so far: each
 * reaction to a fact seen (or to a step ahead's success) whose facts are all still missing, in the
 * order they are reached. After a waiting step the walk follows its success (`mayEmit[0]`), so a
 * running order's road ahead is the rest of the confirmed walk, or of its compensations once a
 * failure occurred. An ended order (`ended`: confirmed or cancelled) takes no step of the confirmed
 * walk any more: the branch not taken is not returned, only the compensations still owed (an
 * undo step, `undoIfAny`, only where its service did something to undo, `owesUndo`).
 * @param seen routing keys of the facts of the saga so far, e.g. `['order.created', 'payment.processed']`
 */
export function stepsAhead(seen: readonly string[], ended: boolean): StepAhead[] {
  const forward = new Set(sagaFacts())
  const occurred = new Set(seen)
  const known = new Set(seen)
  const facts = [...known].map((routingKey) => ({ routingKey, occurred: true }))
  const steps: StepAhead[] = []
  for (let i = 0; i < facts.length; i++) {
    const fact = facts[i]!
    if (ended && forward.has(fact.routingKey)) continue
    for (const reaction of sagaMap) {
      if (reaction.reactsTo.routingKey !== fact.routingKey || reaction.mayEmit.length === 0) continue
      const oneOf = reaction.mayEmit.map((e) => e.routingKey)
      if (oneOf.some((key) => known.has(key))) continue
      if (reaction.undoIfAny === true && !owesUndo(reaction, occurred, forward)) continue
      steps.push({
        service: reaction.service,
        handler: reaction.handler,
        reactsTo: fact.routingKey,
        oneOf,
        waiting: fact.occurred,
      })
      known.add(oneOf[0]!)
      facts.push({ routingKey: oneOf[0]!, occurred: false })
    }
  }
  return steps
}
