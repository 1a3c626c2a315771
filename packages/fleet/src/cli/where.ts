import amqp from 'amqplib'
import { waitingFor } from './chain.js'
import { outboxRowsOfOrder } from './outbox.js'
import { listDeadLetters } from './queues.js'
import type { CliSettings } from './settings.js'

/**
 * Prints where one order stands: its status from the order service, the facts in the four outbox
 * tables (published, pending or parked), what it waits for next and from which service, and its
 * dead-lettered messages. An order the order service does not know (404) is reported as unknown and
 * no wait is guessed; its outbox rows and dead letters are still shown, since a poison message may
 * carry an order id that was never placed. Returns the exit code: 1 when the order is unknown and
 * nothing carries its id, else 0.
 */
export async function where(
  settings: CliSettings,
  orderId: string,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  let unknown = false
  try {
    const res = await fetch(`${settings.orderUrl}/orders/${orderId}`, { signal: AbortSignal.timeout(5_000) })
    unknown = res.status === 404
    const body = (await res.json()) as { status?: string; cancellationReason?: string; reason?: string }
    if (unknown) {
      write(`order ${orderId}: unknown, the order service at ${settings.orderUrl} has no such order`)
    } else if (res.status === 200) {
      const reason = body.cancellationReason ?? body.reason
      write(`order ${orderId}: ${body.status ?? '?'}${reason ? ` (${reason})` : ''}`)
    } else write(`order ${orderId}: the order service answered ${res.status}`)
  } catch (error) {
    write(
      `order ${orderId}: order service unreachable (${error instanceof Error ? error.message : String(error)})`,
    )
  }

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
  const waits = unknown ? [] : waitingFor(rows.map((r) => r.routingKey))
  if (waits.length === 0 && !unknown) write('waiting for: nothing, the saga is complete')
  for (const w of waits) write(`waiting for: ${w.oneOf.join(' or ')} from ${w.service}`)
  for (const r of stuck) {
    write(
      r.state === 'parked'
        ? `  ${r.type} is parked in ${r.service}'s outbox: retry with \`parked retry ${r.id}\``
        : `  ${r.type} is written but not yet published by ${r.service}'s relay (broker down or relay stopped?)`,
    )
  }
  if (published.length > 0 && stuck.length === 0 && waits.length > 0) {
    write(
      `  the last fact was published; the consumer in ${waits.map((w) => w.service).join(', ')} has not committed its reaction yet`,
    )
  }

  const connection = await amqp.connect(settings.amqpUrl).catch((error: unknown) => {
    write(`dead letters: broker unreachable (${error instanceof Error ? error.message : String(error)})`)
    return undefined
  })
  if (!connection) return unknown && rows.length === 0 ? 1 : 0
  connection.on('error', () => undefined)
  const dead = await listDeadLetters(settings, connection, orderId).finally(() =>
    connection.close().catch(() => undefined),
  )
  write(`dead letters: ${dead.length === 0 ? 'none' : ''}`)
  for (const d of dead) {
    write(`  ${d.queue}: ${d.messageId ?? '?'} ${d.type ?? '?'} reason="${d.reason ?? '?'}"`)
  }
  if (unknown && rows.length === 0 && dead.length === 0) {
    write(`order ${orderId}: no outbox row or dead letter carries this id either`)
    return 1
  }
  return 0
}
