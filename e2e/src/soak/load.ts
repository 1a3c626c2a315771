import { randomUUID } from 'node:crypto'
import { orderBody, type PlaceOrder } from '../api.js'
import type { Ledger } from '../ledger.js'
import { delay } from '../wait.js'
import type { Random } from './random.js'

/** The SKUs a soak sells: plenty of each, and one that runs out half way (`scarce`). */
export interface SoakStock {
  plentiful: string[]
  scarce: string
  /** Units of `scarce`: about half the orders that ask for it get one. */
  scarceUnits: number
  /** Units of each plentiful SKU. */
  plentifulUnits: number
}

/** The stock for a soak of `durationS` at `ratePerS` orders/s (one order in ten asks for the scarce SKU). */
export function soakStock(ratePerS: number, durationS: number): SoakStock {
  return {
    plentiful: ['SOAK-MUG', 'SOAK-TEE', 'SOAK-PEN'],
    scarce: 'SOAK-LAMP',
    scarceUnits: Math.max(1, Math.ceil(ratePerS * durationS * 0.05)),
    plentifulUnits: 1_000_000,
  }
}

/** What the load did; the orders themselves are in the ledger. */
export interface LoadTally {
  placed: number
  /** By kind: `normal`, `declined`, `unshippable` (country AQ), `scarce`. */
  byKind: Record<string, number>
  cancelsAsked: number
  /** Cancel answers: `200` (cancelled now or already) and `409` (already CONFIRMED). */
  cancelAnswers: Record<string, number>
  /** Requests retried, by why: `503`, `500`, `no answer: ECONNREFUSED`, `no answer: TimeoutError`, ... */
  retries: Record<string, number>
  /** Requests that never got a final answer within their deadline; their orders are settled by `resolve`. */
  unresolved: number
  /** Requests refused with a 4xx other than expected (a bug in the load or the service). */
  refused: string[]
}

/** Options of `startLoad`. */
export interface LoadOptions {
  /** The order service's base URL now (it may move to another port when restarted). */
  orderUrl: () => string
  ratePerS: number
  /** Share of orders the customer cancels 0-3 s after placing them (0-1). */
  cancelShare: number
  stock: SoakStock
  rng: Random
  ledger: Ledger
}

/** A running load: `stop()` stops placing, waits for what is in flight and settles the unresolved. */
export interface Load {
  readonly tally: LoadTally
  stop(): Promise<LoadTally>
}

const PER_REQUEST_TIMEOUT_MS = 15_000
const REQUEST_DEADLINE_MS = 90_000

type Answer = { status: number; body: unknown } | { error: string }

async function send(
  url: string,
  method: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(PER_REQUEST_TIMEOUT_MS),
    })
    const text = await res.text()
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined }
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause
    return { error: cause?.code ?? (error instanceof Error ? error.name : String(error)) }
  }
}

/**
 * Sends until a final answer (any status but 5xx) or `deadline`, retrying a 5xx or no answer after
 * a growing pause (at most 2 s); undefined when the deadline passed. Retries are counted by why.
 */
async function untilAnswered(
  tally: LoadTally,
  request: () => Promise<Answer>,
  deadline: number,
): Promise<{ status: number; body: unknown } | undefined> {
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    const answer = await request()
    if ('status' in answer && answer.status < 500) return answer
    const why = 'status' in answer ? String(answer.status) : `no answer: ${answer.error}`
    tally.retries[why] = (tally.retries[why] ?? 0) + 1
    await delay(Math.min(2_000, 250 * attempt))
  }
  return undefined
}

/** One order of the mix, drawn from `rng`: its body and its kind. */
function nextOrder(rng: Random, stock: SoakStock): { kind: string; body: PlaceOrder } {
  const roll = rng.next()
  const line = () => ({ sku: rng.pick(stock.plentiful), quantity: rng.int(1, 3) })
  if (roll < 0.08)
    return {
      kind: 'declined',
      body: orderBody([line()], { paymentMethod: rng.pick(['tok_chargeDeclined', 'tok_insufficientFunds']) }),
    }
  if (roll < 0.16) return { kind: 'unshippable', body: orderBody([line()], { country: 'AQ' }) }
  if (roll < 0.26) return { kind: 'scarce', body: orderBody([{ sku: stock.scarce, quantity: 1 }]) }
  const lines = Array.from({ length: rng.int(1, 3) }, line)
  // One line per SKU, as a cart holds them.
  const unique = [...new Map(lines.map((l) => [l.sku, l])).values()]
  return { kind: 'normal', body: orderBody(unique) }
}

const emptyTally = (): LoadTally => ({
  placed: 0,
  byKind: {},
  cancelsAsked: 0,
  cancelAnswers: {},
  retries: {},
  unresolved: 0,
  refused: [],
})

/** Asks the order service to cancel order `id` until answered; counts the answer in `tally`. */
async function cancelOrder(tally: LoadTally, orderUrl: () => string, id: string): Promise<void> {
  tally.cancelsAsked += 1
  const answer = await untilAnswered(
    tally,
    () => send(`${orderUrl()}/orders/${id}/cancel`, 'POST', undefined, {}),
    Date.now() + REQUEST_DEADLINE_MS,
  )
  const status = answer ? String(answer.status) : 'unanswered'
  tally.cancelAnswers[status] = (tally.cancelAnswers[status] ?? 0) + 1
  if (answer && answer.status !== 200 && answer.status !== 409)
    tally.refused.push(`POST /orders/${id}/cancel: ${answer.status} ${JSON.stringify(answer.body)}`)
}

/**
 * A steady load of `ratePerS` orders a second on the order service, the mix drawn from `rng`
 * (`nextOrder`: 8 % declined cards, 8 % to a country the carrier does not serve, 10 % for the scarce
 * SKU, the rest one to three plentiful lines), `cancelShare` of them cancelled by the customer 0-3 s
 * after their 201. Every POST carries an Idempotency-Key and is retried with it until answered
 * (up to 90 s), so an order is in the ledger exactly when it exists; one still unanswered then is
 * asked again by `stop()` once the faults are over.
 */
export function startLoad(opts: LoadOptions): Load {
  const tally = emptyTally()
  const pending = new Set<Promise<void>>()
  const unanswered: { key: string; body: PlaceOrder; sentAt: number }[] = []
  let running = true

  const track = (work: Promise<void>): void => {
    pending.add(work)
    void work.finally(() => pending.delete(work))
  }

  const post = (key: string, body: PlaceOrder) => () =>
    send(`${opts.orderUrl()}/orders`, 'POST', body, { 'idempotency-key': key })

  const placed = (id: string, body: PlaceOrder, sentAt: number, cancelAfterMs: number | undefined) => {
    opts.ledger.add({ id, body, sentAt })
    tally.placed += 1
    if (cancelAfterMs !== undefined)
      track(delay(cancelAfterMs).then(() => cancelOrder(tally, opts.orderUrl, id)))
  }

  const place = async (body: PlaceOrder, cancelAfterMs: number | undefined): Promise<void> => {
    const key = randomUUID()
    const sentAt = Date.now()
    const answer = await untilAnswered(tally, post(key, body), sentAt + REQUEST_DEADLINE_MS)
    if (answer === undefined) {
      tally.unresolved += 1
      unanswered.push({ key, body, sentAt })
    } else if (answer.status === 201) placed((answer.body as { id: string }).id, body, sentAt, cancelAfterMs)
    else tally.refused.push(`POST /orders: ${answer.status} ${JSON.stringify(answer.body)}`)
  }

  const loop = (async () => {
    const started = performance.now()
    for (let i = 0; running; i++) {
      const { kind, body } = nextOrder(opts.rng, opts.stock)
      const cancelAfterMs = opts.rng.chance(opts.cancelShare) ? opts.rng.int(0, 3_000) : undefined
      tally.byKind[kind] = (tally.byKind[kind] ?? 0) + 1
      track(place(body, cancelAfterMs))
      await delay(Math.max(0, started + ((i + 1) * 1000) / opts.ratePerS - performance.now()))
    }
  })()

  return {
    tally,
    async stop() {
      running = false
      await loop
      while (pending.size > 0) await Promise.all([...pending])
      // The faults are over: an order whose POST never got an answer is asked for once more with
      // its key, which replays it if it was made or makes it now, so the ledger matches the database.
      for (const { key, body, sentAt } of unanswered.splice(0)) {
        const answer = await untilAnswered(tally, post(key, body), Date.now() + REQUEST_DEADLINE_MS)
        if (answer?.status === 201) {
          tally.unresolved -= 1
          placed((answer.body as { id: string }).id, body, sentAt, undefined)
        }
      }
      return tally
    },
  }
}
