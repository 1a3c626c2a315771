import { setTimeout as sleep } from 'node:timers/promises'
import type { HttpClient } from './http.js'
import { orderBody } from './orders.js'

/** What placing the orders produced, before any order is read back. */
export interface Placement {
  /** Ids of the orders answered 201. */
  ids: Set<string>
  /** Time from sending a POST to its answer, ms, for the 201s. */
  acceptMs: number[]
  /** Answers by status (`0` = no answer: refused, reset, timed out), e.g. `{ 201: 1200, 503: 4 }`. */
  statuses: Record<string, number>
  /** Time from sending a POST to a 503 answer, ms: shedding must be quick, never a hang. */
  shedMs: number[]
  /** 503 answers that carried no Retry-After (a defect: the contract says shedding carries one). */
  unavailableWithoutRetryAfter: number
  /**
   * POSTs sent more than 100 ms after their scheduled time, because `maxInFlight` requests were
   * already waiting or the client's own loop fell behind: the client, not the fleet, was the limit.
   */
  late: number
  /** Epoch ms of the first send and of the last answer. */
  startedAt: number
  endedAt: number
}

/** Options of `placeOrders`. */
export interface PlaceOptions {
  http: HttpClient
  orderUrl: string
  /** Orders per second, sent open-loop: on schedule whatever the answers take. */
  rate: number
  seconds: number
  /** Requests waiting for an answer beyond which sending pauses (and counts `late`). */
  maxInFlight: number
  /** The body of order number `n` (0, 1, 2 ... in sending order); packages/load's happy-path `orderBody` when absent. */
  body?: (n: number) => unknown
  /** Called about once a second with the placement so far (for the progress line). */
  onTick?: (placement: Placement, elapsedSeconds: number, inFlight: number) => void | Promise<void>
}

/**
 * Places `rate × seconds` orders over HTTP at a steady rate. Open loop (the schedule does not wait
 * for answers, as real clients do not), so a slow fleet shows as growing accept latency, not as a
 * lower offered rate. Sends are grouped per 10 ms timer tick, so the client wakes 100 times a
 * second at most whatever the rate.
 */
export async function placeOrders(options: PlaceOptions): Promise<Placement> {
  const { http, orderUrl, rate, seconds, maxInFlight, body = orderBody } = options
  const total = Math.round(rate * seconds)
  const placement: Placement = {
    ids: new Set(),
    acceptMs: [],
    shedMs: [],
    statuses: {},
    unavailableWithoutRetryAfter: 0,
    late: 0,
    startedAt: Date.now(),
    endedAt: 0,
  }
  const pending = new Set<Promise<void>>()
  const send = (n: number): void => {
    const running = http.request('POST', `${orderUrl}/orders`, body(n)).then((result) => {
      const key = String(result.status)
      placement.statuses[key] = (placement.statuses[key] ?? 0) + 1
      if (result.status === 201) {
        placement.ids.add((result.body as { id: string }).id)
        placement.acceptMs.push(result.ms)
      } else if (result.status === 503) {
        placement.shedMs.push(result.ms)
        if (result.retryAfter === undefined) placement.unavailableWithoutRetryAfter += 1
      }
    })
    pending.add(running)
    void running.finally(() => pending.delete(running))
  }

  const started = performance.now()
  let sent = 0
  let nextTick = 1
  while (sent < total) {
    const elapsed = performance.now() - started
    const due = Math.min(total, Math.floor((elapsed / 1_000) * rate) + 1)
    while (sent < due && pending.size < maxInFlight) {
      // More than 100 ms behind its schedule: the client held it back (maxInFlight or its own CPU).
      if (elapsed - (sent * 1_000) / rate > 100) placement.late += 1
      send(sent)
      sent += 1
    }
    if (elapsed >= nextTick * 1_000) {
      await options.onTick?.(placement, nextTick, pending.size)
      nextTick += 1
    }
    await sleep(10)
  }
  await Promise.all(pending)
  placement.endedAt = Date.now()
  return placement
}
