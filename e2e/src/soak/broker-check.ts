import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { RunNames } from '../run.js'
import { eventually } from '../wait.js'

const run = promisify(execFile)

/** One of the fleet's queues and the messages in it (ready and unacknowledged). */
export interface QueueDepth {
  queue: string
  messages: number
}

/** What the broker holds for the fleet after a soak: both lists must be empty. */
export interface BrokerState {
  /** Dead-letter queues (`<queue>.dlq`) holding messages. */
  deadLettered: QueueDepth[]
  /** Handler and recorder queues still holding messages: work nobody did. */
  waiting: QueueDepth[]
}

/** Every queue of the run (names starting with `<run id>.`) with its depth, through rabbitmqctl. */
async function fleetQueues(names: RunNames): Promise<QueueDepth[]> {
  const { stdout } = await run(
    'rabbitmqctl',
    ['list_queues', '-q', '--no-table-headers', 'name', 'messages'],
    {
      timeout: 60_000,
    },
  )
  return stdout.split('\n').flatMap((line) => {
    const [queue, messages] = line.trim().split(/\s+/)
    return queue?.startsWith(`${names.id}.`) ? [{ queue, messages: Number(messages) }] : []
  })
}

/**
 * The broker's side of a soak's verdict: waits up to `timeoutMs` (default 60 s) for the fleet's
 * handler queues to drain, then reports every dead-letter queue that holds a message and every
 * other queue that still does.
 */
export async function brokerState(names: RunNames, timeoutMs = 60_000): Promise<BrokerState> {
  const split = (queues: QueueDepth[]): BrokerState => ({
    deadLettered: queues.filter((q) => q.queue.endsWith('.dlq') && q.messages > 0),
    waiting: queues.filter((q) => !q.queue.endsWith('.dlq') && q.messages > 0),
  })
  try {
    return await eventually(
      'the fleet queues drained',
      async () => {
        const state = split(await fleetQueues(names))
        return state.waiting.length === 0 && state
      },
      { timeoutMs, intervalMs: 2_000 },
    )
  } catch {
    return split(await fleetQueues(names))
  }
}
