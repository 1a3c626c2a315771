/**
 * The states of an order as the order service's HTTP API names them, as plain constants without zod:
 * a browser bundle (the saga console's UI) imports this module alone (`@saga/contracts/order-states`)
 * for its filters and counts. The zod schemas built on them are in `order-api.ts`.
 */

/** An order's status: PENDING until it is CONFIRMED or CANCELLED (both final). */
export const ORDER_STATUSES = ['PENDING', 'CONFIRMED', 'CANCELLED'] as const
/** `PENDING`, `CONFIRMED` or `CANCELLED`. */
export type OrderStatusName = (typeof ORDER_STATUSES)[number]

/**
 * A service whose step a PENDING order can wait for, in chain order: the services that react to a
 * fact of the confirmed walk, except the order service (its own step runs in the transaction that
 * records the fact). Pinned to the saga map by `order-api.unit.test.ts`.
 */
export const WAITING_FOR = ['payment', 'inventory', 'shipment'] as const
/** `payment`, `inventory` or `shipment`: the service whose fact a PENDING order waits for. */
export type WaitingForName = (typeof WAITING_FOR)[number]
