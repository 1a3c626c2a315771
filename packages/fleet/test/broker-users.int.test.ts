import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import amqp, { type Channel, type ChannelModel } from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { declareTopology, topologyDefinitions, type TopologySpec } from '@saga/messaging/parts'
import {
  amqpUrlFor,
  brokerUsers,
  deleteBrokerUsers,
  ensureBrokerUsers,
  type BrokerUser,
} from '../src/broker-users.js'

const run = promisify(execFile)
const baseUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const id = randomBytes(3).toString('hex')
const vhost = `perm-${id}`
const users = brokerUsers({ userPrefix: `t${id}_` })
const [order, payment] = users
const paymentQueue = 'payment.process-payment-when-order-created'
const orderTopology: TopologySpec = {
  exchange: 'saga.events',
  queuePrefix: 'order',
  handlers: [{ name: 'x', message: { routingKey: 'shipment.created' } }],
}
// Order's user without the two allowances docs/deploy.md explains, to show that each is needed.
const narrowed: BrokerUser = {
  ...order!,
  user: `t${id}_narrowed`,
  password: `t${id}_narrowed`,
  permissions: {
    configure: order!.permissions.configure.replace('saga\\.events|', ''),
    write: order!.permissions.write.replace('|amq\\.default', ''),
    read: order!.permissions.read,
  },
}

const urlIn = (url: string) => {
  const u = new URL(url)
  u.pathname = `/${encodeURIComponent(vhost)}`
  return u.toString()
}
const connections: ChannelModel[] = []
const connectAs = async (url: string): Promise<ChannelModel> => {
  const connection = await amqp.connect(urlIn(url))
  connection.on('error', () => undefined)
  connections.push(connection)
  return connection
}
/** Runs `what` on a fresh channel; resolves with the broker's refusal text, or 'allowed'. */
const attempt = async (connection: ChannelModel, what: (ch: Channel) => Promise<unknown>) => {
  const channel = await connection.createChannel()
  channel.on('error', () => undefined)
  try {
    await what(channel)
    await channel.close()
    return 'allowed'
  } catch (error) {
    return (error as Error).message
  }
}

describe('broker users (one per service, least privilege)', () => {
  // rabbitmqctl takes seconds per call on a loaded machine, and this makes about ten calls.
  beforeAll(async () => {
    await run('rabbitmqctl', ['-q', 'add_vhost', vhost])
    // The admin (guest locally) declares the other service's queue, as that service would at start.
    await run('rabbitmqctl', [
      '-q',
      'set_permissions',
      '-p',
      vhost,
      new URL(baseUrl).username,
      '.*',
      '.*',
      '.*',
    ])
    await ensureBrokerUsers([...users, narrowed], vhost)
    const admin = await connectAs(baseUrl)
    const ch = await admin.createConfirmChannel()
    await ch.assertExchange('saga.events', 'topic', { durable: true })
    await ch.assertQueue(paymentQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
    ch.sendToQueue(paymentQueue, Buffer.from('{}'))
    await ch.waitForConfirms()
    await ch.close()
  }, 300_000)

  afterAll(async () => {
    for (const c of connections) await c.close().catch(() => undefined)
    await run('rabbitmqctl', ['-q', 'delete_vhost', vhost]).catch(() => undefined)
    await deleteBrokerUsers([...users, narrowed])
  }, 300_000)

  it("when order's credentials touch payment's queue, then deleting, reading and purging it are refused", async () => {
    const asOrder = await connectAs(amqpUrlFor(order!, baseUrl))
    expect(await attempt(asOrder, (ch) => ch.deleteQueue(paymentQueue))).toMatch(/ACCESS_REFUSED/)
    expect(await attempt(asOrder, (ch) => ch.consume(paymentQueue, () => undefined))).toMatch(
      /ACCESS_REFUSED/,
    )
    expect(await attempt(asOrder, (ch) => ch.get(paymentQueue))).toMatch(/ACCESS_REFUSED/)
    expect(await attempt(asOrder, (ch) => ch.purgeQueue(paymentQueue))).toMatch(/ACCESS_REFUSED/)
    expect(await attempt(asOrder, (ch) => ch.assertQueue('payment.new-queue'))).toMatch(/ACCESS_REFUSED/)
    // The message is still there for payment: nothing was taken.
    const asPayment = await connectAs(amqpUrlFor(payment!, baseUrl))
    const ch = await asPayment.createChannel()
    expect(await ch.get(paymentQueue, { noAck: true })).not.toBe(false)
  })

  it('when a service declares its own topology and publishes its facts, then the broker allows it', async () => {
    const asOrder = await connectAs(amqpUrlFor(order!, baseUrl))
    const declared = await attempt(asOrder, async (ch) => {
      // What messaging declares at start: the exchange, the DLQ, the queue dead-lettering into it.
      await declareTopology(ch, orderTopology)
      await ch.consume('order.x', () => undefined)
    })
    expect(declared).toBe('allowed')
    const confirm = await asOrder.createConfirmChannel()
    confirm.publish('saga.events', 'order.created', Buffer.from('{}'))
    confirm.sendToQueue('order.x.dlq', Buffer.from('{}'))
    await confirm.waitForConfirms()
    expect((await confirm.checkQueue('order.x.dlq')).messageCount).toBe(1)
  })

  it("when order's relay publishes another service's fact, then the topic permission refuses it", async () => {
    const asOrder = await connectAs(amqpUrlFor(order!, baseUrl))
    const refused = await attempt(asOrder, async (ch) => {
      ch.publish('saga.events', 'payment.processed', Buffer.from('{}'))
      // A refused publish closes the channel; a round trip after it surfaces the error.
      await ch.checkExchange('saga.events')
    })
    expect(refused).toMatch(/ACCESS_REFUSED/)
    expect(await attempt(asOrder, (ch) => ch.deleteExchange('amq.topic'))).toMatch(/ACCESS_REFUSED/)
  })
  it('when write on amq.default is taken away, then a new handler queue cannot be declared and no dead-letter copy sent', async () => {
    expect(narrowed.permissions.write).not.toContain('amq')
    const asNarrowed = await connectAs(amqpUrlFor(narrowed, baseUrl))
    // A queue no one declared yet: redeclaring an existing one skips the dead-letter exchange check.
    const fresh = {
      ...orderTopology,
      handlers: [{ name: 'fresh', message: { routingKey: 'shipment.created' } }],
    }
    const [dlq, queue] = topologyDefinitions(fresh).queues
    expect(queue?.arguments['x-dead-letter-exchange']).toBe('')
    const declared = await attempt(asNarrowed, async (ch) => {
      await ch.assertQueue(dlq!.name, { durable: true, arguments: dlq!.arguments })
      await ch.assertQueue(queue!.name, { durable: true, arguments: queue!.arguments })
    })
    // queue.declare with a DLX needs write on the DLX (RabbitMQ access control); '' is amq.default.
    expect(declared).toMatch(/ACCESS_REFUSED.*amq\.default/)
    // The consumer's own dead-letter copy goes to `<queue>.dlq` through the default exchange.
    const deadLettered = await attempt(asNarrowed, async (ch) => {
      ch.sendToQueue(dlq!.name, Buffer.from('{}'))
      await ch.checkQueue(dlq!.name)
    })
    expect(deadLettered).toMatch(/ACCESS_REFUSED.*amq\.default/)
  })

  it('when configure on the events exchange is taken away, then declaring it is refused but checking it is not', async () => {
    expect(narrowed.permissions.configure).not.toContain('saga')
    const asNarrowed = await connectAs(amqpUrlFor(narrowed, baseUrl))
    expect(
      await attempt(asNarrowed, (ch) => ch.assertExchange('saga.events', 'topic', { durable: true })),
    ).toMatch(/ACCESS_REFUSED/)
    expect(await attempt(asNarrowed, (ch) => ch.checkExchange('saga.events'))).toBe('allowed')
  })

  it("when order's credentials send straight to payment's queue by name, then the broker accepts it (what write on amq.default still allows)", async () => {
    const asOrder = await connectAs(amqpUrlFor(order!, baseUrl))
    const before = (await (await asOrder.createChannel()).checkQueue(paymentQueue)).messageCount
    const confirm = await asOrder.createConfirmChannel()
    confirm.sendToQueue(paymentQueue, Buffer.from('{}'))
    await confirm.waitForConfirms()
    expect((await confirm.checkQueue(paymentQueue)).messageCount).toBe(before + 1)
  })

  it('when the users are put in place again with another password, then the new one logs in, the old one is refused and the permissions are the same', async () => {
    const renewed = { ...narrowed, password: `${narrowed.password}-renewed` }
    await ensureBrokerUsers([renewed], vhost)
    try {
      await expect(connectAs(amqpUrlFor(narrowed, baseUrl))).rejects.toThrow(/ACCESS.REFUSED/)
      const asRenewed = await connectAs(amqpUrlFor(renewed, baseUrl))
      expect(await attempt(asRenewed, (ch) => ch.checkExchange('saga.events'))).toBe('allowed')
      expect(
        await attempt(asRenewed, (ch) => ch.assertExchange('saga.events', 'topic', { durable: true })),
      ).toMatch(/ACCESS_REFUSED/)
    } finally {
      await ensureBrokerUsers([narrowed], vhost)
    }
  })

  it('when rabbitmqctl exits without reading the definitions (RABBITMQCTL=false), then putting the users in place fails naming the command, and nothing throws beside it', async () => {
    await expect(ensureBrokerUsers(users, vhost, 'false')).rejects.toThrow('false import_definitions failed')
  })
})
