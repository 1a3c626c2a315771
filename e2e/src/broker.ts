import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import { infra } from './run.js'

const run = promisify(execFile)

/**
 * Names of the broker's queues that start with `prefix`. Asks the management API when
 * RABBITMQ_MANAGEMENT_URL is set (http://guest:guest@127.0.0.1:15672), else `rabbitmqctl` (this
 * machine has the plugin off). Returns [] when neither answers; callers then fall back to the names
 * they know.
 */
export async function listQueues(prefix: string): Promise<string[]> {
  const management = process.env.RABBITMQ_MANAGEMENT_URL
  if (management) {
    try {
      const url = new URL('/api/queues?columns=name', management)
      const auth = Buffer.from(`${decodeURIComponent(url.username || 'guest')}:${decodeURIComponent(url.password || 'guest')}`)
      url.username = ''
      url.password = ''
      const res = await fetch(url, { headers: { authorization: `Basic ${auth.toString('base64')}` } })
      if (res.ok) {
        const queues = (await res.json()) as { name: string }[]
        return queues.map((q) => q.name).filter((n) => n.startsWith(prefix))
      }
    } catch {
      // fall through to rabbitmqctl
    }
  }
  try {
    const { stdout } = await run('rabbitmqctl', ['list_queues', 'name', '--no-table-headers', '-q'], {
      timeout: 20_000,
    })
    return stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((n) => n.startsWith(prefix))
  } catch {
    return []
  }
}

/**
 * Deletes the run's queues (every queue named `<runId>.…`, plus `known`) and its exchange.
 * Errors are swallowed per item: teardown must go on after one failure.
 */
export async function deleteRunTopology(runId: string, exchange: string, known: string[] = []): Promise<string[]> {
  const queues = [...new Set([...(await listQueues(`${runId}.`)), ...known])]
  const connection = await amqp.connect(infra.amqpUrl)
  const deleted: string[] = []
  try {
    for (const queue of queues) {
      // A fresh channel each time: deleting a queue that does not exist is fine, but any channel
      // error would close the channel for the rest.
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      try {
        await channel.deleteQueue(queue)
        deleted.push(queue)
        await channel.close()
      } catch {
        // already gone
      }
    }
    const channel = await connection.createChannel()
    channel.on('error', () => undefined)
    await channel.deleteExchange(exchange).catch(() => undefined)
  } finally {
    await connection.close().catch(() => undefined)
  }
  return deleted
}
