import { CancelReason } from '@saga/contracts'
import { waitingFor } from './chain.js'
import { callOrderService, probeHealth, type HealthSeen } from './http.js'
import { outboxRowsOfOrder } from './outbox.js'
import { fleetDeadLetters, type FleetDeadLetter, type FleetRead } from './admin-http.js'
import { SERVICES, type CliSettings } from './settings.js'

/** What `where` reads of GET /orders/:id. */
export interface OrderSeen {
  status?: string
  cancellationReason?: string | null
  reason?: string
  failedStep?: string | null
  deadlineAt?: string | null
  events?: Array<{ type: string; note?: string | null }>
}

/** `1h 2m 3s` for a duration in ms (whole seconds, largest units first). */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  return [h ? `${h}h` : '', h || m ? `${m}m` : '', `${s}s`].filter(Boolean).join(' ')
}

/**
 * The lines about the order's fate under its status line: for a PENDING order its deadline and the
 * time left at `now` (or how long ago it passed); for a CANCELLED one who cancelled it (the customer,
 * the deadline and the step it was waiting for, or the failing step); and every fact the order
 * service recorded as late (it arrived after the order ended and was not acted on).
 */
export function fateLines(order: OrderSeen, now: Date): string[] {
  const lines: string[] = []
  if (order.status === 'PENDING') {
    if (!order.deadlineAt) lines.push('deadline: none (placed before deadlines existed)')
    else {
      const left = Date.parse(order.deadlineAt) - now.getTime()
      lines.push(
        left >= 0
          ? `deadline: ${order.deadlineAt} (${formatDuration(left)} left; then it is cancelled as deadline_exceeded)`
          : `deadline: ${order.deadlineAt} (passed ${formatDuration(-left)} ago; the deadline scheduler cancels it at its next wake-up)`,
      )
    }
  } else if (order.status === 'CANCELLED') {
    const reason = order.cancellationReason ?? order.reason
    const step = order.failedStep ?? undefined
    lines.push(
      reason === 'customer_requested'
        ? 'cause: the customer cancelled it'
        : reason === 'operator_requested'
          ? "cause: an operator cancelled it (the order service's admin actions say who)"
          : reason === 'deadline_exceeded'
            ? `cause: its deadline${order.deadlineAt ? ` (${order.deadlineAt})` : ''} passed while it waited for ${step ?? '?'}`
            : `cause: the ${step ?? '?'} step failed (${reason ?? '?'})`,
    )
  }
  for (const event of order.events ?? []) {
    if (event.note?.startsWith('late:')) lines.push(`late fact: ${event.type} (${event.note})`)
  }
  return lines
}

/**
 * The lines under "waiting for" when the last fact is published and nothing is stuck in an outbox:
 * for each awaited service that gave no answer to `/health/live` (see `probeHealth`), that it is not
 * answering at its URL; for the others, in one line, that their consumer has not committed its
 * reaction yet. `health` maps a service to what its probe found; a service missing from it is taken
 * as answering (nothing known against it).
 * Example: `["  payment is not answering at http://127.0.0.1:3002 (connect ECONNREFUSED 127.0.0.1:3002):
 * is it running? (the fact waits in its queue)"]`.
 */
export function awaitedLines(
  services: readonly string[],
  urls: Readonly<Record<string, string>>,
  health: Readonly<Record<string, HealthSeen | undefined>>,
): string[] {
  const lines: string[] = []
  const answering: string[] = []
  for (const service of new Set(services)) {
    const seen = health[service]
    if (seen && !seen.answering) {
      lines.push(
        `  ${service} is not answering at ${urls[service] ?? '?'} (${seen.reason}): is it running? (the fact waits in its queue)`,
      )
    } else answering.push(service)
  }
  if (answering.length > 0)
    lines.push(
      `  the last fact was published; the consumer in ${answering.join(', ')} has not committed its reaction yet`,
    )
  return lines
}

/**
 * Prints where one order stands: its status from the order service (with its deadline and time left
 * when PENDING, its cause when CANCELLED, see `fateLines`), the facts in the four outbox
 * tables (published, pending or parked), what it waits for next and from which service (and, when
 * the last fact is published, whether that service answers its `/health/live`, see `awaitedLines`),
 * and its dead-lettered messages. An order service that does not answer is reported with the
 * message every command uses (`orderServiceUnreachable`), and the rest is still shown. An order the
 * order service does not know (404) is reported as unknown and no wait is guessed; its outbox rows
 * and dead letters are still shown, since a poison message may carry an order id that was never
 * placed. Returns the exit code: 1 when the order is unknown and
 * nothing carries its id, else 0.
 */
export async function where(
  settings: CliSettings,
  orderId: string,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const { unknown, cancelledByOrder } = await writeOrderStatus(settings, orderId, write)

  const { rows, unreachable } = await outboxRowsOfOrder(settings, orderId)
  write('facts (outbox rows of the four services):')
  if (rows.length === 0) write('  none')
  for (const r of rows) {
    const extra =
      r.state === 'published'
        ? ''
        : ` attempts=${r.attempts}${r.lastError ? ` last_error="${r.lastError}"` : ''}`
    write(`  ${r.state.padEnd(9)} ${r.type.padEnd(30)} ${r.service.padEnd(10)} ${r.id}${extra}`)
  }
  for (const u of unreachable) write(`  (${u.service} database unreachable: ${u.error})`)

  const published = rows.filter((r) => r.state === 'published').map((r) => r.routingKey)
  const stuck = rows.filter((r) => r.state !== 'published')
  // An unknown order waits for nothing: guessing `order.created from order` would mislead.
  const waits = unknown || cancelledByOrder ? [] : waitingFor(rows.map((r) => r.routingKey))
  if (cancelledByOrder) {
    write('waiting for: nothing the chain requires; each step undoes what it did for the order, if anything')
  } else if (waits.length === 0 && !unknown) write('waiting for: nothing, the saga is complete')
  for (const w of waits) write(`waiting for: ${w.oneOf.join(' or ')} from ${w.service}`)
  for (const r of stuck) {
    write(
      r.state === 'parked'
        ? `  ${r.type} is parked in ${r.service}'s outbox: retry with \`parked retry ${r.id}\``
        : `  ${r.type} is written but not yet published by ${r.service}'s relay (broker down or relay stopped?)`,
    )
  }
  if (published.length > 0 && stuck.length === 0 && waits.length > 0) {
    const services = [...new Set(waits.map((w) => w.service))]
    const urls: Record<string, string> = {}
    for (const [name, service] of Object.entries(settings.services)) urls[name] = service.url
    const health = Object.fromEntries(
      await Promise.all(
        services.map(async (s) => [s, urls[s] ? await probeHealth(urls[s]) : undefined] as const),
      ),
    )
    for (const line of awaitedLines(services, urls, health)) write(line)
  }

  const dead = await writeDeadLetters(settings, orderId, write)
  if (dead === undefined) return unknown && rows.length === 0 ? 1 : 0
  if (unknown && rows.length === 0 && dead.length === 0) {
    write(`order ${orderId}: no outbox row or dead letter carries this id either`)
    return 1
  }
  return 0
}

/**
 * Writes the order's status line from the order service (and `fateLines` when it answered 200).
 * `unknown`: the order service answered 404; `cancelledByOrder`: CANCELLED by its deadline or its
 * customer. An unreachable order service is written as its error and gives both false.
 */
async function writeOrderStatus(
  settings: CliSettings,
  orderId: string,
  write: (line: string) => void,
): Promise<{ unknown: boolean; cancelledByOrder: boolean }> {
  let unknown = false
  // Cancelled by its deadline or its customer: the steps' undo facts come only if there was
  // something to undo, so the saga map's walk says nothing about what is still to come.
  let cancelledByOrder = false
  try {
    const res = await callOrderService(settings, `/orders/${orderId}`, { timeoutMs: 5_000 })
    unknown = res.status === 404
    const body = (await res.json()) as OrderSeen
    if (unknown) {
      write(`order ${orderId}: unknown, the order service at ${settings.orderUrl} has no such order`)
    } else if (res.status === 200) {
      const reason = body.cancellationReason ?? body.reason
      write(`order ${orderId}: ${body.status ?? '?'}${reason ? ` (${reason})` : ''}`)
      for (const line of fateLines(body, new Date())) write(line)
      cancelledByOrder = body.status === 'CANCELLED' && CancelReason.safeParse(reason).success
    } else write(`order ${orderId}: the order service answered ${res.status}`)
  } catch (error) {
    write(`order ${orderId}: ${error instanceof Error ? error.message : String(error)}`)
  }
  return { unknown, cancelledByOrder }
}

/**
 * The lines of an order's dead letters as `where` prints them: one per service that could not say
 * (`dead letters of payment: unknown (…)`), then, unless no service could, a header and one line
 * per message. When some services could not say, the header names the ones that did, so that
 * "none" is not read as true of the whole fleet: `dead letters in order, inventory, shipment: none`.
 */
export function deadLetterLines({ found, failed }: FleetRead<FleetDeadLetter>): string[] {
  const lines = failed.map((f) => `dead letters of ${f.service}: unknown (${f.error})`)
  if (failed.length === SERVICES.length) return lines
  const answered = SERVICES.filter((service) => !failed.some((f) => f.service === service))
  const scope = failed.length === 0 ? '' : ` in ${answered.join(', ')}`
  lines.push(`dead letters${scope}: ${found.length === 0 ? 'none' : ''}`)
  for (const d of found) {
    lines.push(`  ${d.queue}: ${d.messageId ?? '?'} ${d.type ?? '?'} reason="${d.reason ?? '?'}"`)
  }
  return lines
}

/**
 * Writes the order's dead-lettered messages (each service's admin surface, `fleetDeadLetters`) as
 * `deadLetterLines` and returns them; undefined when no service could say.
 */
async function writeDeadLetters(
  settings: CliSettings,
  orderId: string,
  write: (line: string) => void,
): Promise<FleetDeadLetter[] | undefined> {
  const read = await fleetDeadLetters(settings, orderId)
  for (const line of deadLetterLines(read)) write(line)
  return read.failed.length === SERVICES.length ? undefined : read.found
}
