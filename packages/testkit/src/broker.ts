import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'

/** The broker tests use: `AMQP_URL` env or amqp://guest:guest@127.0.0.1:5672. */
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'

/** What `deleteBrokerObjects` removes: named queues/exchanges, and/or all whose name starts with `prefix`. */
export interface BrokerCleanup {
  queues?: string[]
  exchanges?: string[]
  /** Needs `rabbitmqctl` on the PATH (a local broker) or RABBITMQ_MANAGEMENT_URL; else skipped. */
  prefix?: string
}

const run = promisify(execFile)

async function listByPrefix(kind: 'queues' | 'exchanges', prefix: string): Promise<string[]> {
  const management = process.env.RABBITMQ_MANAGEMENT_URL
  let names: string[]
  if (management) {
    const url = new URL(`api/${kind}`, management.endsWith('/') ? management : `${management}/`)
    const auth = Buffer.from(
      `${decodeURIComponent(url.username || 'guest')}:${decodeURIComponent(url.password || 'guest')}`,
    )
    url.username = ''
    url.password = ''
    const response = await fetch(url, { headers: { authorization: `Basic ${auth.toString('base64')}` } })
    names = ((await response.json()) as { name: string }[]).map((item) => item.name)
  } else {
    const { stdout } = await run('rabbitmqctl', [`list_${kind}`, '-q', '--no-table-headers', 'name'], {
      timeout: 30_000,
    })
    names = stdout.split('\n').map((line) => line.trim())
  }
  return names.filter((name) => name.startsWith(prefix))
}

/** Deletes queues and exchanges a test made. Missing ones are ignored. */
export async function deleteBrokerObjects(cleanup: BrokerCleanup, amqpUrl = AMQP_URL): Promise<void> {
  const queues = new Set(cleanup.queues ?? [])
  const exchanges = new Set(cleanup.exchanges ?? [])
  if (cleanup.prefix) {
    const [q, e] = await Promise.all([
      listByPrefix('queues', cleanup.prefix).catch(() => []),
      listByPrefix('exchanges', cleanup.prefix).catch(() => []),
    ])
    for (const name of q) queues.add(name)
    for (const name of e) exchanges.add(name)
  }
  if (queues.size === 0 && exchanges.size === 0) return
  const connection = await amqp.connect(amqpUrl)
  connection.on('error', () => undefined)
  try {
    for (const name of queues) {
      // A delete of a missing queue succeeds on RabbitMQ 3.x; a channel error still closes the
      // channel, so each delete gets its own.
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      await channel.deleteQueue(name).catch(() => undefined)
      await channel.close().catch(() => undefined)
    }
    for (const name of exchanges) {
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      await channel.deleteExchange(name).catch(() => undefined)
      await channel.close().catch(() => undefined)
    }
  } finally {
    await connection.close().catch(() => undefined)
  }
}
