/**
 * `GET /api/search?q=`: what kind of id a text is and which order it names, asked of the services
 * that hold each kind (the console keeps none of it): the order service for an order id or its
 * start, a customer id, an Idempotency-Key and the message id of a fact it recorded
 * (`GET /orders/lookup`); every service's outbox for a message id the order service has not
 * recorded and for a W3C trace id (`GET /admin/messaging/records/find`).
 */
import { SERVICES, type LookupKind, type OrderLookup, type ServiceName } from '@saga/contracts'
import type { OutboxRecord } from './shapes.js'
import type { Upstream } from './upstream.js'

/** What a searched text was found to be: a kind the order service knows, or a trace id. */
export type SearchKind = LookupKind | 'trace'

/** One order a search found, as what kind of id, and which service said so. */
export interface SearchMatch {
  kind: SearchKind
  orderId: string
  service: ServiceName
}

/** `GET /api/search`'s answer. */
export interface SearchAnswer {
  query: string
  matches: SearchMatch[]
  /**
   * Where the console lands: the order's page when the matches name one order; the orders list
   * filtered by customer or by id prefix when they name several that way; null when nothing (or
   * orders of several kinds) matched, and the UI lists the matches.
   */
  to: string | null
  /** The services that could not be asked, with why (a search answers what the others found). */
  unanswered: Array<{ service: ServiceName; reason: string }>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TRACE_ID = /^[0-9a-f]{32}$/i

const q = encodeURIComponent

/** Where a search lands for `matches` (see `SearchAnswer.to`). */
export function landing(query: string, matches: readonly SearchMatch[]): string | null {
  const orders = new Set(matches.map((m) => m.orderId))
  const [only] = orders
  if (orders.size === 1 && only !== undefined) return `/orders/${only}`
  if (orders.size === 0) return null
  const kinds = new Set(matches.map((m) => m.kind))
  if (kinds.size !== 1) return null
  if (kinds.has('customer')) return `/orders?customerId=${q(query.toLowerCase())}`
  if (kinds.has('idPrefix')) return `/orders?idPrefix=${q(query.toLowerCase())}`
  return null
}

/** Why a service did not answer, in its own words. */
const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The order each outbox row concerns: its aggregate, else its correlation id (the order id). */
const orderOf = (row: OutboxRecord): string | null => row.aggregateId ?? row.correlationId

/**
 * Asks every service's outbox for the row of a message id or the rows of a trace id; a service that
 * does not answer is noted in `unanswered`.
 */
async function findInOutboxes(
  upstream: Upstream,
  param: 'messageId' | 'traceId',
  value: string,
  unanswered: SearchAnswer['unanswered'],
): Promise<SearchMatch[]> {
  const kind: SearchKind = param === 'traceId' ? 'trace' : 'message'
  const found = await Promise.all(
    SERVICES.map(async (service) => {
      const path = `/admin/messaging/records/find?${param}=${q(value)}`
      try {
        const { outbox } = await upstream.json<{ outbox: OutboxRecord[] }>(service, path)
        return outbox.flatMap((row) => {
          const orderId = orderOf(row)
          return orderId === null || !UUID.test(orderId) ? [] : [{ kind, orderId, service }]
        })
      } catch (error) {
        unanswered.push({ service, reason: reasonOf(error) })
        return []
      }
    }),
  )
  // One match per order: a trace has a row in each service it passed.
  const byOrder = new Map(found.flat().map((m) => [m.orderId, m]))
  return [...byOrder.values()]
}

/**
 * Resolves `text` (trimmed) to orders. The order service is asked first; the outboxes for a UUID
 * it did not find (a message it has not recorded, or the order service is down) and for a
 * 32-hex-digit text (a trace id, which no service indexes, so it is not asked for every search).
 * Never throws: a service that does not answer is named in `unanswered`.
 */
export async function searchOrders(upstream: Upstream, text: string): Promise<SearchAnswer> {
  const query = text.trim()
  const unanswered: SearchAnswer['unanswered'] = []
  const matches: SearchMatch[] = []
  try {
    const lookup = await upstream.json<OrderLookup>('order', `/orders/lookup?id=${q(query)}`)
    matches.push(...lookup.matches.map((m): SearchMatch => ({ ...m, service: 'order' })))
  } catch (error) {
    unanswered.push({ service: 'order', reason: reasonOf(error) })
  }
  if (matches.length === 0 && UUID.test(query))
    matches.push(...(await findInOutboxes(upstream, 'messageId', query.toLowerCase(), unanswered)))
  if (TRACE_ID.test(query))
    matches.push(...(await findInOutboxes(upstream, 'traceId', query.toLowerCase(), unanswered)))
  return { query, matches, to: landing(query, matches), unanswered }
}
