/**
 * Stock decisions of the inventory service: pure functions, no I/O.
 * The reaction loads the stock rows (locked), asks `reserve` what to do, and writes the answer.
 */

/** One line of an order as inventory sees it: a sku and a positive integer quantity (units). */
export interface OrderLine {
  sku: string
  quantity: number
}

/** The units of one sku free to reserve right now. A sku missing from the map is unknown. */
export type StockLevels = ReadonlyMap<string, number>

/** A line that cannot be served: the units this line asks for and the units of its sku that are free. */
export interface ShortLine {
  sku: string
  requested: number
  available: number
}

/** Why a reservation was refused (snake_case reason codes, as the contracts' `ReasonCode`). */
export type ReservationFailureReason = 'out_of_stock' | 'unknown_sku'

/**
 * The decision for one order: every line reserved, or none.
 * - `reserved`: `take` holds the units to move from available to reserved, one entry per sku
 *   (lines naming the same sku are summed), in sku order, the order rows are locked and updated in.
 * - `refused`: `short` lists, in order-line order, every line whose sku's total request (over all
 *   lines of that sku) exceeds what is free; unknown skus have `available: 0`. `reason` is
 *   `unknown_sku` when any sku is unknown, else `out_of_stock`.
 */
export type ReservationOutcome =
  | { kind: 'reserved'; take: OrderLine[] }
  | { kind: 'refused'; reason: ReservationFailureReason; short: ShortLine[] }

/** The skus of the lines, distinct and sorted: the fixed order rows are locked in, so two orders never deadlock. */
export function lockOrder(lines: readonly OrderLine[]): string[] {
  return [...new Set(lines.map((line) => line.sku))].sort(compareSku)
}

/**
 * Decides whether an order's lines can be reserved from `stock`, all lines or none.
 *
 * @param lines the order lines; quantities are positive integers (the contract guarantees it)
 * @param stock available units per known sku
 * @throws RangeError when a quantity is not a positive integer (a contract violation, not a business outcome)
 */
export function reserve(lines: readonly OrderLine[], stock: StockLevels): ReservationOutcome {
  const requested = new Map<string, number>()
  for (const line of lines) {
    if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0) {
      throw new RangeError(`quantity of ${line.sku} must be a positive integer, got ${line.quantity}`)
    }
    requested.set(line.sku, (requested.get(line.sku) ?? 0) + line.quantity)
  }
  const shortSkus = new Set<string>()
  let unknown = false
  for (const [sku, want] of requested) {
    const free = stock.get(sku)
    if (free === undefined) unknown = true
    if (free === undefined || free < want) shortSkus.add(sku)
  }
  if (shortSkus.size > 0) {
    // Per line, not per sku: each entry stays within a line's quantity limit, and together the
    // entries of one sku show its whole request.
    const short = lines
      .filter((line) => shortSkus.has(line.sku))
      .map((line) => ({ sku: line.sku, requested: line.quantity, available: stock.get(line.sku) ?? 0 }))
    return { kind: 'refused', reason: unknown ? 'unknown_sku' : 'out_of_stock', short }
  }
  const take = lockOrder(lines).map((sku) => ({ sku, quantity: requested.get(sku) ?? 0 }))
  return { kind: 'reserved', take }
}

/** Code-point order, the same in every locale (and the same as PostgreSQL's "C" collation). */
function compareSku(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
