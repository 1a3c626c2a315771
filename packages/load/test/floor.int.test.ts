import { AMQP_URL, POSTGRES_URL } from '@saga/testkit'
import amqp from 'amqplib'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { floorQueues, runFloor } from '../src/floor.js'

describe('npm run load -- --floor', () => {
  it("when the floor's queues are derived, then they are the confirmed walk's handlers and the timeline recorder, as the saga map says", () => {
    expect(floorQueues('p').map(({ name, routingKeys, emits }) => ({ name, routingKeys, emits }))).toEqual([
      {
        name: 'p.payment.process-payment-when-order-created',
        routingKeys: ['order.created'],
        emits: 'payment.processed',
      },
      {
        name: 'p.inventory.reserve-stock-when-payment-processed',
        routingKeys: ['payment.processed'],
        emits: 'stock.reserved',
      },
      {
        name: 'p.shipment.create-shipment-when-stock-reserved',
        routingKeys: ['stock.reserved'],
        emits: 'shipment.created',
      },
      {
        name: 'p.order.confirm-order-when-shipment-created',
        routingKeys: ['shipment.created'],
        emits: 'order.confirmed',
      },
      {
        name: 'p.order.record-timeline',
        routingKeys: ['payment.processed', 'stock.reserved', 'order.confirmed'],
        emits: undefined,
      },
    ])
  })

  it('when it runs, then every saga takes its five commits, five publishes and seven deliveries, its CPU is measured, and its database and queues are gone after', async () => {
    const result = await runFloor({
      rate: 20,
      seconds: 2,
      postgresUrl: POSTGRES_URL,
      amqpUrl: AMQP_URL,
      drainTimeoutMs: 30_000,
    })
    expect(result.sagas).toBe(40)
    expect(result.perSaga.publishes).toBe(5)
    expect(result.perSaga.deliveries).toBe(7)
    // Placing and four handlers, plus the timeline's batches (at least one for 40 sagas' facts).
    expect(result.perSaga.commits).toBeGreaterThan(5)
    expect(result.perSaga.recorderBatchSize).toBeGreaterThan(1)
    expect(result.terminalMs.p99).toBeGreaterThan(0)
    for (const value of Object.values(result.cpuMsPerSaga)) expect(value).toBeGreaterThan(0)

    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [result.name])
      expect(rowCount).toBe(0)
    } finally {
      await admin.end()
    }
    const connection = await amqp.connect(AMQP_URL)
    try {
      for (const queue of floorQueues(result.name)) {
        // A passive declare of a missing queue closes its channel with 404.
        const channel = await connection.createChannel()
        channel.on('error', () => undefined)
        await expect(channel.checkQueue(queue.name)).rejects.toThrow(/404/)
      }
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      await expect(channel.checkExchange(result.name)).rejects.toThrow(/404/)
    } finally {
      await connection.close()
    }
  }, 60_000)
})
