import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import type { Channel, ChannelModel } from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AMQP_URL, deleteBrokerObjects, uniqueName } from '@saga/testkit'
import { declareTopology, TopologyError, topologyDefinitions, type TopologySpec } from '../src/topology.js'

const run = promisify(execFile)
let connection: ChannelModel
const prefix = uniqueName('topology')
const exchange = `${prefix}_ex`
const spec: TopologySpec = {
  exchange,
  queuePrefix: prefix,
  handlers: [
    { name: 'reserve-stock-when-payment-processed', message: { routingKey: 'payment.processed' } },
    { name: 'release-stock-when-shipment-failed', message: { routingKey: 'shipment.failed' } },
  ],
}
const names = topologyDefinitions(spec).queues.map((queue) => queue.name)

/** A fresh channel per use: a refused declaration closes the channel it was made on. */
async function channel(): Promise<Channel> {
  const opened = await connection.createChannel()
  opened.on('error', () => undefined)
  return opened
}

/** The broker's own view of our queues (rabbitmqctl: the management API is not always on). */
async function brokerQueues(): Promise<Map<string, { type: string; durable: string; arguments: string }>> {
  const { stdout } = await run('rabbitmqctl', [
    'list_queues',
    '-q',
    '--no-table-headers',
    'name',
    'type',
    'durable',
    'arguments',
  ])
  const queues = new Map<string, { type: string; durable: string; arguments: string }>()
  for (const line of stdout.split('\n')) {
    const [name, type, durable, ...args] = line.trim().split(/\s+/)
    if (name?.startsWith(prefix))
      queues.set(name, { type: type ?? '', durable: durable ?? '', arguments: args.join(' ') })
  }
  return queues
}

beforeAll(async () => {
  connection = await amqp.connect(AMQP_URL)
  connection.on('error', () => undefined)
})
afterAll(async () => {
  await connection?.close()
  await deleteBrokerObjects({
    exchanges: [exchange],
    queues: [...names, `${prefix}.conflicting`, `${prefix}.conflicting.dlq`],
  })
})

describe('declareTopology', () => {
  it('when declared twice, then both succeed and the broker holds durable quorum queues and their DLQs', async () => {
    await declareTopology(await channel(), spec)
    await declareTopology(await channel(), spec)

    const queues = await brokerQueues()
    expect([...queues.keys()].sort()).toEqual([...names].sort())
    for (const queue of queues.values()) expect(queue).toMatchObject({ type: 'quorum', durable: 'true' })
    expect(queues.get(`${prefix}.release-stock-when-shipment-failed`)?.arguments).toContain(
      `${prefix}.release-stock-when-shipment-failed.dlq`,
    )
  })

  it('when a message is published with a handler routing key, then only that handler queue receives it, persistently', async () => {
    await declareTopology(await channel(), spec)
    const publisher = await connection.createConfirmChannel()
    publisher.publish(exchange, 'shipment.failed', Buffer.from('{}'), { persistent: true })
    await publisher.waitForConfirms()

    const check = await channel()
    const released = await check.get(`${prefix}.release-stock-when-shipment-failed`)
    expect(released && released.properties.deliveryMode).toBe(2)
    expect(await check.get(`${prefix}.reserve-stock-when-payment-processed`)).toBe(false)
    if (released) check.ack(released)
    await publisher.close()
  })

  it('when a queue exists with other arguments, then declaring fails with a TopologyError naming it', async () => {
    const other = await channel()
    await other.assertQueue(`${prefix}.conflicting`, { durable: true })
    const conflicting: TopologySpec = {
      ...spec,
      handlers: [{ name: 'conflicting', message: { routingKey: 'order.created' } }],
    }

    const declaring = declareTopology(await channel(), conflicting)

    await expect(declaring).rejects.toThrow(TopologyError)
    await expect(declaring).rejects.toThrow(/queue '.*\.conflicting' failed: .*PRECONDITION_FAILED/)
  })
})
