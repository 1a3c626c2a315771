#!/usr/bin/env node
/**
 * The order CLI: place an order and follow its event chain live, see where an order is stuck, and
 * list or requeue dead-lettered messages and parked outbox rows. `npm run order -- help`.
 */
import { parseArgs } from 'node:util'
import amqp from 'amqplib'
import { ChainWatcher, outcome, printChain } from './follow.js'
import { callOrderService } from './http.js'
import { parkedRows, retryParked } from './outbox.js'
import { orderBody, parsePlaceArgs } from './place.js'
import { discardDeadLetter, listDeadLetters, requeueDeadLetters } from './queues.js'
import { loadSettings, type CliSettings } from './settings.js'
import { where } from './where.js'

const USAGE = `usage: npm run order -- <command>

  place --sku <sku> [--qty <n>] [--sku <sku> --qty <n> ...] [--price <minor units>] [--currency EUR]
        [--country DE] [--payment tok_visa|tok_chargeDeclined] [--follow] [--timeout <ms>]
        (a value starting with '-' is written --qty=-1)
  follow <orderId> [--timeout <ms>]     print the order's event chain, live, until it is final
  where <orderId>                       status, deadline and time left or the cancel's cause, facts,
                                        what it waits for, dead letters
  cancel <orderId>                      cancel a PENDING order (POST /orders/:id/cancel)
  dlq list                              dead-lettered messages of every handler
  dlq requeue <messageId> | --all       move dead-lettered messages back to their handler's queue
  dlq discard <messageId>               print that dead-lettered message, then remove it from its DLQ
  parked list                           outbox rows whose publishing gave up
  parked retry <id>                     make a parked row pending again

environment: AMQP_URL, AMQP_EXCHANGE (saga.events), <SERVICE>_SERVICE_URL (http://127.0.0.1:<SERVICE>_PORT,
  3001-3004), <SERVICE>_DATABASE_URL and <SERVICE>_QUEUE_PREFIX for SERVICE in ORDER PAYMENT INVENTORY
  SHIPMENT, RABBITMQ_MANAGEMENT_URL (optional, to list queues)`

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const out = (line: string): void => void process.stdout.write(`${line}\n`)

class UsageError extends Error {}

function uuidArg(value: string | undefined, what: string): string {
  if (!value || !UUID.test(value)) throw new UsageError(`${what}: expected a uuid, got ${value ?? 'nothing'}`)
  return value
}

async function place(settings: CliSettings, args: string[]): Promise<number> {
  const values = parsePlaceArgs(args)
  const body = orderBody({
    skus: values.sku,
    quantities: values.qty,
    unitPrice: Number(values.price),
    currency: values.currency,
    country: values.country,
    paymentMethod: values.payment,
  })
  // Subscribe before placing, so not even the first event can slip past.
  const watcher = values.follow ? await ChainWatcher.open(settings) : undefined
  try {
    const res = await callOrderService(settings, '/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const answer = (await res.json()) as { id?: string; status?: string; total?: unknown; createdAt?: string }
    if (res.status !== 201 || !answer.id) {
      out(`POST /orders answered ${res.status}: ${JSON.stringify(answer, null, 2)}`)
      return 1
    }
    out(`order ${answer.id} placed: ${answer.status ?? '?'} total ${JSON.stringify(answer.total)}`)
    if (!watcher) return 0
    return await finish(settings, watcher, answer.id, createdAt(answer), Number(values.timeout))
  } finally {
    await watcher?.close()
  }
}

/** What the CLI reads of an order (GET /orders/:id, or the 201 of POST /orders). */
interface OrderAnswer {
  status?: string
  cancellationReason?: string
  reason?: string
  createdAt?: string
}

/** The order's `createdAt` as a Date, the origin of the offsets `follow` prints; undefined when absent or not a time. */
function createdAt(order: OrderAnswer | undefined): Date | undefined {
  const at = order?.createdAt ? new Date(order.createdAt) : undefined
  return at && !Number.isNaN(at.getTime()) ? at : undefined
}

/**
 * GET /orders/:id; undefined for 404.
 * @throws OrderServiceUnreachable when the order service does not answer
 */
async function getOrder(settings: CliSettings, orderId: string): Promise<OrderAnswer | undefined> {
  const res = await callOrderService(settings, `/orders/${orderId}`, { timeoutMs: 5_000 })
  if (res.status === 404) return undefined
  return (await res.json()) as OrderAnswer
}

/** POST /orders/:id/cancel and print the outcome; exit code 0 when the order is CANCELLED afterwards. */
async function cancel(settings: CliSettings, orderId: string): Promise<number> {
  const res = await callOrderService(settings, `/orders/${orderId}/cancel`, { method: 'POST' })
  const body = (await res.json()) as { status?: string; cancellationReason?: string; message?: string }
  if (res.status === 200) {
    out(`order ${orderId}: ${body.status ?? '?'} (${body.cancellationReason ?? '?'})`)
    return 0
  }
  out(`POST /orders/${orderId}/cancel answered ${res.status}: ${body.message ?? JSON.stringify(body)}`)
  return 1
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
  for (const line of result.lines) out(line)
  return result.code
}

async function withBroker<T>(settings: CliSettings, fn: (c: amqp.ChannelModel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(settings.amqpUrl)
  connection.on('error', () => undefined)
  try {
    return await fn(connection)
  } finally {
    await connection.close().catch(() => undefined)
  }
}

async function main(argv: string[]): Promise<number> {
  const settings = loadSettings()
  const [command, sub, ...rest] = argv
  switch (command) {
    case 'place':
      return place(settings, argv.slice(1))
    case 'follow': {
      const orderId = uuidArg(sub, 'follow <orderId>')
      const { values } = parseArgs({ args: rest, options: { timeout: { type: 'string', default: '30000' } } })
      const order = await getOrder(settings, orderId)
      if (!order) {
        out(`no order ${orderId} at ${settings.orderUrl}`)
        return 1
      }
      const watcher = await ChainWatcher.open(settings)
      try {
        return await finish(settings, watcher, orderId, createdAt(order), Number(values.timeout))
      } finally {
        await watcher.close()
      }
    }
    case 'where':
      return where(settings, uuidArg(sub, 'where <orderId>'))
    case 'cancel':
      return cancel(settings, uuidArg(sub, 'cancel <orderId>'))
    case 'dlq':
      if (sub === 'list') {
        const dead = await withBroker(settings, (c) => listDeadLetters(settings, c))
        if (dead.length === 0) out('no dead-lettered messages')
        for (const d of dead) {
          out(
            `${d.queue}\n  ${d.messageId ?? '?'} ${d.type ?? '?'} order=${d.correlationId ?? '?'} at=${d.deadLetteredAt ?? '?'}\n  reason: ${d.reason ?? '?'}`,
          )
        }
        return 0
      }
      if (sub === 'requeue') {
        const target = rest[0] === '--all' ? undefined : uuidArg(rest[0], 'dlq requeue <messageId>|--all')
        const moved = await withBroker(settings, (c) => requeueDeadLetters(settings, c, target))
        for (const m of moved)
          out(`requeued ${m.messageId ?? '?'} ${m.type ?? '?'} -> ${m.queue.replace(/\.dlq$/, '')}`)
        if (target && moved.length === 0) {
          out(`message ${target} was not found in any dead-letter queue (see \`dlq list\`)`)
          return 1
        }
        out(`${moved.length} message(s) requeued`)
        return 0
      }
      if (sub === 'discard') {
        const target = uuidArg(rest[0], 'dlq discard <messageId>')
        const removed = await withBroker(settings, (c) =>
          discardDeadLetter(settings, c, target, (d) =>
            out(
              `discarding from ${d.queue}:\n  ${d.messageId ?? '?'} ${d.type ?? '?'} order=${d.correlationId ?? '?'} at=${d.deadLetteredAt ?? '?'}\n  reason: ${d.reason ?? '?'}`,
            ),
          ),
        )
        if (removed.length === 0) {
          out(`message ${target} was not found in any dead-letter queue (see \`dlq list\`)`)
          return 1
        }
        out(`${removed.length} message(s) discarded`)
        return 0
      }
      break
    case 'parked':
      if (sub === 'list') {
        const { rows, unreachable } = await parkedRows(settings)
        if (rows.length === 0) out('no parked outbox rows')
        for (const r of rows) {
          out(
            `${r.service.padEnd(10)} ${r.id} ${r.type} attempts=${r.attempts} parked=${r.failedAt?.toISOString()}\n  last error: ${r.lastError ?? '?'}`,
          )
        }
        for (const u of unreachable) out(`(${u.service} database unreachable: ${u.error})`)
        return 0
      }
      if (sub === 'retry') {
        const id = uuidArg(rest[0], 'parked retry <id>')
        const services = await retryParked(settings, id)
        out(services.length ? `row ${id} is pending again in ${services.join(', ')}` : `no parked row ${id}`)
        return services.length ? 0 : 1
      }
      break
    case 'help':
    case '--help':
    case undefined:
      out(USAGE)
      return command ? 0 : 1
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`)
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`)
    process.exitCode = 1
  },
)
