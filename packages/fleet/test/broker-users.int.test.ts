import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import amqp, { type Channel, type ChannelModel } from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { amqpUrlFor, brokerUsers, deleteBrokerUsers, ensureBrokerUsers } from '../src/broker-users.js'

const run = promisify(execFile)
const baseUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const id = randomBytes(3).toString('hex')
const vhost = `perm-${id}`
const users = brokerUsers({ userPrefix: `t${id}_` })
const [order, payment] = users
const paymentQueue = 'payment.process-payment-when-order-created'

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
    await ensureBrokerUsers(users, vhost)
    const admin = await connectAs(baseUrl)
    const ch = await admin.createConfirmChannel()
    await ch.assertExchange('saga.events', 'topic', { durable: true })
    await ch.assertQueue(paymentQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
    ch.sendToQueue(paymentQueue, Buffer.from('{}'))
    await ch.waitForConfirms()
    await ch.close()
  })

  afterAll(async () => {
    for (const c of connections) await c.close().catch(() => undefined)
    await run('rabbitmqctl', ['-q', 'delete_vhost', vhost]).catch(() => undefined)
    await deleteBrokerUsers(users)
  })

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
      await ch.assertExchange('saga.events', 'topic', { durable: true })
      await ch.assertQueue('order.x.dlq', { durable: true, arguments: { 'x-queue-type': 'quorum' } })
      await ch.assertQueue('order.x', { durable: true, arguments: { 'x-queue-type': 'quorum' } })
      await ch.bindQueue('order.x', 'saga.events', 'shipment.created')
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
})
