/**
 * Every consumed queue, a handler's or a batch recorder's, lives on the same queue channel, so each
 * broker-side fault is tested here on both kinds: it stops consuming, says so, comes back by itself
 * on a new channel, and a message sent afterwards takes effect once.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import type { ConfirmChannel } from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AMQP_URL, deleteBrokerObjects } from '@saga/testkit'
import { createAmqpConnection, type AmqpConnection } from '../src/amqp/connection.js'
import type { QueueChannel, QueueChannelState } from '../src/amqp/queue-channel.js'
import { createBatchRecorder } from '../src/recorder/recorder.js'
import type { RecorderDefinition } from '../src/recorder/types.js'
import { createSignals, type Signals } from '../src/signals.js'
import { deadLetterQueueName } from '../src/topology.js'
import {
  closeConnectionsNamed,
  createInboxFixture,
  envelope,
  eventually,
  happened,
  insertRecorded,
  recordingHandler,
  type InboxFixture,
} from './inbox-fixture.js'

const run = promisify(execFile)

let fixture: InboxFixture
const recorderQueues: string[] = []
beforeAll(async () => {
  fixture = await createInboxFixture('queue_faults')
  await fixture.db.pool.query('CREATE TABLE recorded (message_id uuid PRIMARY KEY, n integer NOT NULL)')
})
afterAll(async () => {
  if (!fixture) return
  await deleteBrokerObjects({ queues: [...recorderQueues, ...recorderQueues.map(deadLetterQueueName)] })
  await fixture.cleanup()
})

/** What each test needs of a running consumer of one queue, whatever its kind. */
interface Running {
  queue: string
  channel: QueueChannel
  signals: Signals
  /** The name its connection has in the broker's connection list. */
  connectionName: string
  /** How many times the message with this id took effect. */
  effects(id: string): Promise<number>
  stop(): Promise<void>
}

/**
 * How long a test waits for a queue to be consumed again. Only ends a hang: a reopen comes after a
 * backoff of 100 ms doubling to 5 s plus a declaration, and without the reopen it never comes.
 */
const BACK_WITHIN_MS = 30_000

async function startHandlerQueue(name: string): Promise<Running> {
  const { consumer, connection, signals } = await fixture.startConsumer([recordingHandler(name)], {
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
  return {
    queue: fixture.queue(name),
    channel: consumer.queues[0]!.channel,
    signals,
    connectionName: `${fixture.prefix}-consumer`,
    effects: async (id) => (await fixture.effects(name)).filter((e) => e.message_id === id).length,
    async stop() {
      await consumer.stop()
      await connection.close()
    },
  }
}

async function startRecorder(name: string): Promise<Running> {
  const definition: RecorderDefinition = {
    name,
    messages: [happened],
    async record(messages, db) {
      await insertRecorded(db, 'recorded', messages)
    },
  }
  const connectionName = `${fixture.prefix}-recorder-${name}`
  const connection: AmqpConnection = createAmqpConnection({ url: AMQP_URL, name: connectionName })
  const signals = createSignals()
  const recorder = createBatchRecorder({
    definition,
    connection,
    db: fixture.db.pool,
    exchange: fixture.exchange,
    queuePrefix: fixture.prefix,
    signals,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
  recorderQueues.push(recorder.queue)
  recorder.start()
  connection.start()
  await eventually('recorder consuming', () => recorder.consuming)
  return {
    queue: recorder.queue,
    channel: recorder.channel,
    signals,
    connectionName,
    async effects(id) {
      const { rows } = await fixture.db.pool.query('SELECT 1 FROM recorded WHERE message_id = $1', [id])
      return rows.length
    },
    async stop() {
      await recorder.stop()
      await connection.close()
    },
  }
}

/** A channel of its own for the test's broker operations. */
async function adminChannel(): Promise<{ channel: ConfirmChannel; close(): Promise<void> }> {
  const connection = await amqp.connect(AMQP_URL)
  connection.on('error', () => undefined)
  const channel = await connection.createConfirmChannel()
  channel.on('error', () => undefined)
  return { channel, close: () => connection.close().catch(() => undefined) }
}

/** Publishes a fresh message and waits until it took effect; asserts it took effect once. */
async function takesEffectOnce(running: Running): Promise<void> {
  const message = envelope()
  const handled = running.signals.waitFor('handled', (s) => s.id === message.id, 30_000)
  await fixture.publish(message)
  await handled
  expect(await running.effects(message.id as string)).toBe(1)
}

/** The channel the queue is consumed on now (it must be consuming). */
function channelOf(running: Running): ConfirmChannel {
  const state = running.channel.state
  if (state.name !== 'consuming') throw new Error(`expected consuming, got ${state.name}`)
  return state.channel
}

/**
 * Runs `fault`, then waits until the queue is consumed again on a channel other than the one it
 * had, and no longer reports a problem. Not timed: a fault made with rabbitmqctl takes seconds of
 * its own (an Erlang VM starts for each run), many more on a loaded machine.
 */
async function comesBackAfter(running: Running, fault: () => Promise<unknown> | void): Promise<void> {
  const before = channelOf(running)
  await fault()
  await eventually(
    'it consumes again on a new channel',
    () => running.channel.state.name === 'consuming' && channelOf(running) !== before,
    BACK_WITHIN_MS,
  )
  expect(running.channel.problem).toBeUndefined()
  expect(running.channel.notConsumingSince).toBeUndefined()
}

const kinds = [
  ['a handler queue', startHandlerQueue],
  ['a batch recorder', startRecorder],
] as const

describe.each(kinds)('queue faults on %s', (kind, start) => {
  const tag = kind === 'a handler queue' ? 'h' : 'r'

  /**
   * Starts one on the queue `${name}-${tag}`, does `fault` to it, and expects it to consume again
   * within the bound and a message sent afterwards to take effect once; stops it after.
   */
  const recoversFrom = async (name: string, fault: (running: Running) => Promise<unknown> | void) => {
    const running = await start(`${name}-${tag}`)
    try {
      await comesBackAfter(running, () => fault(running))
      await takesEffectOnce(running)
    } finally {
      await running.stop()
    }
  }

  it('when its queue is deleted, then it declares the queue again, consumes, and a new message takes effect once', async () => {
    await recoversFrom('deleted', (running) => fixture.deleteQueue(running.queue))
  })

  it('when an operator deletes its queue (rabbitmqctl delete_queue: the broker cancels the consumer), then it declares the queue again and consumes', async () => {
    await recoversFrom('cancelled', (running) => run('rabbitmqctl', ['delete_queue', running.queue]))
  })

  it('when the broker closes its connection (rabbitmqctl close_connection), then it consumes again on the new one', async () => {
    await recoversFrom('closed', async (running) => {
      expect(await closeConnectionsNamed(running.connectionName, 'closed by the queue-faults test')).toBe(1)
    })
  })

  it('when its channel is closed by a precondition error (406, an unknown delivery tag acked), then it reopens the channel', async () => {
    // The broker answers an ack of a tag it never delivered with 406 PRECONDITION_FAILED and
    // closes the channel: https://www.rabbitmq.com/amqp-0-9-1-reference#basic.ack
    await recoversFrom('precondition', (running) =>
      channelOf(running).ack({ fields: { deliveryTag: 999_999 } } as never),
    )
  })

  it('when its queue cannot be consumed (held exclusively by another connection), then it says so with the reason until it can, then consumes', async () => {
    const running = await start(`locked-${tag}`)
    const admin = await adminChannel()
    try {
      await admin.channel.deleteQueue(running.queue)
      // Exclusive to the test's connection: the consumer's declaration and consume get 405 RESOURCE_LOCKED.
      await admin.channel.assertQueue(running.queue, { exclusive: true, durable: false })
      await eventually('it stops consuming', () => !running.channel.consuming)
      const since = running.channel.notConsumingSince
      // Each failed reopen waits anew (a new `waiting` state): after two of them, still not
      // consuming, it says why, and still counts from when it stopped.
      const waits = new Set<QueueChannelState>()
      await eventually('two failed reopens', () => {
        const state = running.channel.state
        if (state.name === 'waiting') waits.add(state)
        return waits.size >= 3
      })
      expect(running.channel.consuming).toBe(false)
      expect(running.channel.problem).toMatch(/RESOURCE_LOCKED|locked|exclusive/i)
      expect(since).toBeDefined()
      expect(running.channel.notConsumingSince).toBe(since)
      await admin.close()
      await eventually('it consumes again', () => running.channel.consuming, BACK_WITHIN_MS)
      await takesEffectOnce(running)
    } finally {
      await admin.close()
      await running.stop()
    }
  })
})
