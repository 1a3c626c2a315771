import {
  callAdmin,
  fleetDeadLetters,
  fleetParkedRows,
  type FleetDeadLetter,
  type FleetRead,
} from './admin-http.js'
import { ChainWatcher, outcome, printChain } from './follow.js'
import { callOrderService } from './http.js'
import { orderBody, type PlaceInput } from './place.js'
import { SERVICES, brokerUnreachable, type CliSettings } from './settings.js'

/** Results go to stdout, one line each. */
export const out = (line: string): void => void process.stdout.write(`${line}\n`)
/** Refusals, failures and what could not be done go to stderr. */
export const err = (line: string): void => void process.stderr.write(`${line}\n`)

/** What the CLI reads of an order (GET /orders/:id, or the 201 of POST /orders). */
interface OrderAnswer {
  id?: string
  status?: string
  total?: unknown
  cancellationReason?: string
  reason?: string
  createdAt?: string
  message?: string
  details?: unknown
}

/**
 * A refusal as one line, then one indented line per field the service named: `POST /orders answered
 * 400: The request is invalid` and `  body.lines.0.quantity: must be at least 1`. A body in another
 * shape is printed as JSON.
 */
export function refusal(what: string, status: number, answer: OrderAnswer): string {
  if (typeof answer.message !== 'string') return `${what} answered ${status}: ${JSON.stringify(answer)}`
  const details = Array.isArray(answer.details)
    ? (answer.details as Array<{ path?: unknown; issue?: unknown }>)
    : []
  const lines = details
    .filter((d) => typeof d.path === 'string' && typeof d.issue === 'string')
    .map((d) => `  ${String(d.path)}: ${String(d.issue)}`)
  return [`${what} answered ${status}: ${answer.message}`, ...lines].join('\n')
}

/** The order's `createdAt` as a Date, the origin of the offsets `follow` prints; undefined when absent or not a time. */
function createdAt(order: OrderAnswer | undefined): Date | undefined {
  const at = order?.createdAt ? new Date(order.createdAt) : undefined
  return at && !Number.isNaN(at.getTime()) ? at : undefined
}

/** The JSON body of an answer, or `{}` when it has none or it is not JSON. */
async function bodyOf(res: Response): Promise<OrderAnswer> {
  const text = await res.text()
  try {
    return JSON.parse(text) as OrderAnswer
  } catch {
    return text ? { message: text } : {}
  }
}

/**
 * GET /orders/:id; undefined for 404.
 * @throws OrderServiceUnreachable when the order service does not answer
 */
async function getOrder(settings: CliSettings, orderId: string): Promise<OrderAnswer | undefined> {
  const res = await callOrderService(settings, `/orders/${orderId}`, { timeoutMs: 5_000 })
  if (res.status === 404) return undefined
  return bodyOf(res)
}

/** Opens the live subscription, or says why it cannot (the broker's address and the cause). */
async function openWatcher(settings: CliSettings): Promise<ChainWatcher | string> {
  try {
    return await ChainWatcher.open(settings)
  } catch (error) {
    return brokerUnreachable(settings.amqpUrl, error)
  }
}

/** The options of `place`, parsed: quantities and price are numbers, the timeout whole ms. */
export interface PlaceOptions extends Omit<PlaceInput, 'unitPrice'> {
  price: number
  follow: boolean
  timeoutMs: number
}

/**
 * POST /orders with the body `orderBody` builds, then, with `follow`, its chain until it is final.
 * The live subscription opens before the POST so not even the first event slips past; a broker
 * that does not answer does not stop the order: it is placed, and the CLI says what it cannot
 * follow. Exit code: 0 placed (and, following, final); 1 refused (the answer on stderr), or placed
 * but not followable; 3 still not final after the timeout (see `outcome`).
 */
export async function place(settings: CliSettings, options: PlaceOptions): Promise<number> {
  const body = orderBody({ ...options, unitPrice: options.price })
  const watcher = options.follow ? await openWatcher(settings) : undefined
  try {
    const res = await callOrderService(settings, '/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const answer = await bodyOf(res)
    if (res.status !== 201 || !answer.id) {
      err(refusal('POST /orders', res.status, answer))
      return 1
    }
    out(`order ${answer.id} placed: ${answer.status ?? '?'} total ${JSON.stringify(answer.total)}`)
    if (watcher === undefined) return 0
    if (typeof watcher === 'string') {
      err(
        `cannot follow order ${answer.id}: ${watcher}. The order is placed; ` +
          `see where it stands: npm run order -- where ${answer.id}`,
      )
      return 1
    }
    return await finish(settings, watcher, answer.id, createdAt(answer), options.timeoutMs)
  } finally {
    if (typeof watcher === 'object') await watcher.close()
  }
}

/** `follow <orderId>`: its chain from the outboxes, then live until it is final or `timeoutMs` passed. */
export async function follow(settings: CliSettings, orderId: string, timeoutMs: number): Promise<number> {
  const order = await getOrder(settings, orderId)
  if (!order) {
    err(`no order ${orderId} at ${settings.orderUrl}`)
    return 1
  }
  const watcher = await openWatcher(settings)
  if (typeof watcher === 'string') {
    err(
      `cannot follow order ${orderId} live: ${watcher}. See its facts so far: npm run order -- where ${orderId}`,
    )
    return 1
  }
  try {
    return await finish(settings, watcher, orderId, createdAt(order), timeoutMs)
  } finally {
    await watcher.close()
  }
}

async function finish(
  settings: CliSettings,
  watcher: ChainWatcher,
  orderId: string,
  origin: Date | undefined,
  timeoutMs: number,
): Promise<number> {
  const terminal = await printChain(settings, watcher, orderId, origin, { timeoutMs })
  const order = await getOrder(settings, orderId)
  const result = outcome(
    orderId,
    order?.status,
    order?.cancellationReason ?? order?.reason,
    terminal !== undefined,
    timeoutMs,
  )
  for (const line of result.lines) (result.code === 0 ? out : err)(line)
  return result.code
}

/** POST /orders/:id/cancel and print the outcome; exit code 0 when the order is CANCELLED afterwards. */
export async function cancel(settings: CliSettings, orderId: string): Promise<number> {
  const res = await callOrderService(settings, `/orders/${orderId}/cancel`, { method: 'POST' })
  const body = await bodyOf(res)
  if (res.status === 200) {
    out(`order ${orderId}: ${body.status ?? '?'} (${body.cancellationReason ?? '?'})`)
    return 0
  }
  err(`POST /orders/${orderId}/cancel answered ${res.status}: ${body.message ?? JSON.stringify(body)}`)
  return 1
}

const describe = (d: FleetDeadLetter): string =>
  `  ${d.messageId ?? '?'} ${d.type ?? '?'} order=${d.correlationId ?? '?'} at=${d.deadLetteredAt ?? '?'}\n  reason: ${d.reason ?? '?'}`

/** Writes the services that could not be read, on stderr. */
const reportFailed = (failed: FleetRead<unknown>['failed']): void => {
  for (const f of failed) err(`(${f.service}: ${f.error})`)
}

/** `dlq list`: every dead-lettered message of the fleet's handlers, by queue (each service's admin surface). */
export async function dlqList(settings: CliSettings): Promise<number> {
  const { found, failed } = await fleetDeadLetters(settings)
  if (found.length === 0) out('no dead-lettered messages')
  for (const d of found) out(`${d.queue}\n${describe(d)}`)
  reportFailed(failed)
  return 0
}

/** The dead letters grouped by the service and queue that hold them. */
function byQueue(letters: FleetDeadLetter[]): Map<string, FleetDeadLetter[]> {
  const groups = new Map<string, FleetDeadLetter[]>()
  for (const d of letters) {
    const key = `${d.service} ${d.queue}`
    groups.set(key, [...(groups.get(key) ?? []), d])
  }
  return groups
}

/**
 * POSTs `dead-letters/<kind>` for each queue holding some of `letters` (ids in chunks of 500) and
 * returns the letters whose outcome was `done`; a refusal (no ADMIN_TOKEN, a wrong one) is written
 * on stderr and stops it.
 */
async function moveDeadLetters(
  settings: CliSettings,
  kind: 'requeue' | 'discard',
  letters: FleetDeadLetter[],
): Promise<FleetDeadLetter[] | undefined> {
  const done: FleetDeadLetter[] = []
  const outcome = kind === 'requeue' ? 'requeued' : 'discarded'
  for (const group of byQueue(letters).values()) {
    const { service, queue } = group[0] as FleetDeadLetter
    const ids = [...new Set(group.map((d) => d.messageId).filter((id): id is string => id !== null))]
    for (let i = 0; i < ids.length; i += 500) {
      const res = await callAdmin<{ results?: { messageId: string; outcome: string }[] }>(
        settings,
        service,
        `/dead-letters/${kind}`,
        { queue, messageIds: ids.slice(i, i + 500) },
      )
      if (res.status !== 200) {
        err(`${service} refused to ${kind} (${res.status}): ${res.body.message ?? ''}`)
        return undefined
      }
      const moved = new Set(
        (res.body.results ?? []).filter((r) => r.outcome === outcome).map((r) => r.messageId),
      )
      done.push(...group.filter((d) => d.messageId !== null && moved.has(d.messageId)))
    }
  }
  return done
}

/** `dlq requeue <messageId>` or `--all` (`messageId` undefined); 1 when the one asked for is not in any DLQ. */
export async function dlqRequeue(settings: CliSettings, messageId: string | undefined): Promise<number> {
  const { found, failed } = await fleetDeadLetters(settings)
  reportFailed(failed)
  const chosen = found.filter((d) => messageId === undefined || d.messageId === messageId)
  const moved = await moveDeadLetters(settings, 'requeue', chosen)
  if (moved === undefined) return 1
  for (const m of moved)
    out(`requeued ${m.messageId ?? '?'} ${m.type ?? '?'} -> ${m.queue.replace(/\.dlq$/, '')}`)
  if (messageId && moved.length === 0) {
    err(`message ${messageId} was not found in any dead-letter queue (see \`dlq list\`)`)
    return 1
  }
  out(`${moved.length} message(s) requeued`)
  return 0
}

/** `dlq discard <messageId>`: prints each copy, then removes it; 1 when no DLQ holds it. */
export async function dlqDiscard(settings: CliSettings, messageId: string): Promise<number> {
  const { found, failed } = await fleetDeadLetters(settings)
  reportFailed(failed)
  const chosen = found.filter((d) => d.messageId === messageId)
  for (const d of chosen) out(`discarding from ${d.queue}:\n${describe(d)}`)
  const removed = await moveDeadLetters(settings, 'discard', chosen)
  if (removed === undefined) return 1
  if (removed.length === 0) {
    err(`message ${messageId} was not found in any dead-letter queue (see \`dlq list\`)`)
    return 1
  }
  out(`${removed.length} message(s) discarded`)
  return 0
}

/** `parked list`: the outbox rows whose publishing gave up, in the four services. */
export async function parkedList(settings: CliSettings): Promise<number> {
  const { found, failed } = await fleetParkedRows(settings)
  if (found.length === 0) out('no parked outbox rows')
  for (const r of found) {
    out(
      `${r.service.padEnd(10)} ${r.id} ${r.type} attempts=${r.attempts} parked=${r.failedAt ?? '?'}\n  last error: ${r.lastError ?? '?'}`,
    )
  }
  reportFailed(failed)
  return 0
}

/** `parked retry <id>`: that row pending again (POST parked/retry of each service); 1 when none holds it parked. */
export async function parkedRetry(settings: CliSettings, id: string): Promise<number> {
  const services: string[] = []
  for (const service of SERVICES) {
    const res = await callAdmin<{ results?: { outcome: string }[] }>(settings, service, '/parked/retry', {
      ids: [id],
    }).catch((error: unknown) => {
      err(`(${service}: ${error instanceof Error ? error.message : String(error)})`)
      return undefined
    })
    if (res === undefined) continue
    if (res.status !== 200) {
      err(`${service} refused to retry (${res.status}): ${res.body.message ?? ''}`)
      return 1
    }
    if (res.body.results?.[0]?.outcome === 'retried') services.push(service)
  }
  if (services.length === 0) {
    err(`no parked row ${id} (see \`parked list\`)`)
    return 1
  }
  out(`row ${id} is pending again in ${services.join(', ')}`)
  return 0
}
