/**
 * `waitingFor` in SQL: the rule of domain/waiting.ts as an expression over an order row, for the
 * list filter, the list items and the stats counts. It is computed when read, not stored: it
 * changes with facts the batch recorder writes (PaymentProcessed, StockReserved), and a stored
 * column would turn each of those inserts into an UPDATE of the order row (its indexes, its lock),
 * on every saga. Reading it costs one probe of the timeline index per PENDING order looked at;
 * PENDING orders are the ones in flight (at most throughput x ORDER_DEADLINE_MS), never the whole
 * table.
 */
import { Prisma } from '../generated/prisma/client.js'
import { WAIT_STEPS, type WaitingFor } from '../domain/waiting.js'

const afterTypes = WAIT_STEPS.map((step) => step.after)
const services = WAIT_STEPS.map((step) => step.service)

/**
 * The step the order `alias` waits for (text: `payment`, `inventory`, `shipment`), meaningful for a
 * PENDING row: the wait of the latest `WAIT_STEPS` fact in its timeline (`array_position` ranks
 * the facts in chain order), else the first. One index scan of `order_events (order_id, …)`,
 * reading the order's few timeline rows.
 */
export const waitingForSql = (alias: string): Prisma.Sql => {
  const order = Prisma.raw(`${alias}.id`)
  return Prisma.sql`(${services}::text[])[COALESCE((
    SELECT max(array_position(${afterTypes}::text[], e.type)) FROM order_events e
    WHERE e.order_id = ${order} AND e.type = ANY(${afterTypes}::text[])), 1)]`
}

/** Whether the text a query returned is a step (guards the cast from the database's text). */
export const asWaitingFor = (text: string | null): WaitingFor | null =>
  text === null ? null : (services.find((service) => service === text) ?? null)
