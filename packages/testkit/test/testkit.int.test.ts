import { readFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import amqp from 'amqplib'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually } from '../src/eventually.js'
import {
  AMQP_URL,
  TcpProxy,
  createTestDatabase,
  deleteBrokerObjects,
  freePort,
  tapQueue,
  uniqueName,
} from '../src/index.js'

describe('testkit', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('when a free port is asked for, then it lies below the ephemeral range, where no client connection can take it, and can be bound', async () => {
    const ephemeralStart = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    )
    const port = await freePort()
    expect(port).toBeGreaterThanOrEqual(20_000)
    expect(port).toBeLessThan(ephemeralStart)
    const server = createServer().listen(port, '127.0.0.1')
    await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject))
    await new Promise((resolve) => server.close(resolve))
  })

  it('when a test database is created, then it is reachable and drop() removes it', async () => {
    const db = await createTestDatabase({ prefix: 'testkit' })
    const { rows } = await db.pool.query<{ name: string }>('SELECT current_database() AS name')
    expect(rows[0]?.name).toBe(db.name)
    await db.drop()
    const admin = new pg.Client({
      connectionString: process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    })
    await admin.connect()
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name])
    await admin.end()
    expect(left.rowCount).toBe(0)
  })

  it('when the proxy is cut, silenced and restored, then connections fail, stall and work again', async () => {
    const db = await createTestDatabase({ prefix: 'testkit' })
    cleanups.push(() => db.drop())
    const proxy = await TcpProxy.start('127.0.0.1', 5432)
    cleanups.push(() => proxy.close())
    const query = async (timeoutMs: number): Promise<unknown> => {
      const client = new pg.Client({
        connectionString: proxy.url(db.url),
        connectionTimeoutMillis: timeoutMs,
      })
      client.on('error', () => undefined)
      try {
        await client.connect()
        return (await client.query('SELECT 1 AS one')).rows[0]
      } finally {
        await client.end().catch(() => undefined)
      }
    }
    expect(await query(2_000)).toEqual({ one: 1 })
    proxy.cut()
    await expect(query(2_000)).rejects.toThrow()
    proxy.silence()
    await expect(query(300)).rejects.toThrow(/timeout/i)
    proxy.restore()
    expect(await query(2_000)).toEqual({ one: 1 })
  })

  it('when the proxy silences what the target sends, then the target still gets the client bytes and the replies wait until restore', async () => {
    const received: string[] = []
    const server = createServer((socket) =>
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk.toString())
        socket.write(`echo ${chunk.toString()}`)
      }),
    ).listen(0, '127.0.0.1')
    await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject))
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())))
    const proxy = await TcpProxy.start('127.0.0.1', (server.address() as { port: number }).port)
    cleanups.push(() => proxy.close())
    const client = connect(proxy.port, '127.0.0.1')
    client.on('error', () => undefined)
    cleanups.push(() => Promise.resolve(void client.destroy()))
    await new Promise((resolve) => client.once('connect', resolve))
    const replies: string[] = []
    client.on('data', (chunk: Buffer) => replies.push(chunk.toString()))
    proxy.silence('fromTarget')
    client.write('ping')
    await eventually('the echo server received the ping', () => received.length > 0, 5_000)
    expect(received).toEqual(['ping'])
    // The echo waits in the proxy's upstream socket: it arrives only once the direction is restored.
    expect(replies).toEqual([])
    proxy.restore()
    await eventually('the echo came back', () => replies.length > 0, 5_000)
    expect(replies.join('')).toBe('echo ping')
  })

  it('when messages are published to the exchange, then the tap collects the bound ones with their ids, counts and chains', async () => {
    const exchange = uniqueName('testkit_ex')
    const tap = await tapQueue(AMQP_URL, exchange, ['a.*'])
    cleanups.push(() => deleteBrokerObjects({ exchanges: [exchange] }))
    cleanups.push(() => tap.delete())
    const connection = await amqp.connect(AMQP_URL)
    const channel = await connection.createConfirmChannel()
    const third = tap.waitFor((m) => m.routingKey === 'a.three', 5_000, 'a.three')
    channel.publish(exchange, 'a.one', Buffer.from('{"n":1}'), { messageId: 'm1', correlationId: 'o1' })
    channel.publish(exchange, 'b.two', Buffer.from('{"n":2}'), { messageId: 'm2', correlationId: 'o1' })
    channel.publish(exchange, 'a.three', Buffer.from('{"n":3}'), { messageId: 'm3', correlationId: 'o2' })
    channel.publish(exchange, 'a.one', Buffer.from('{"n":1}'), { messageId: 'm1', correlationId: 'o1' })
    await channel.waitForConfirms()
    await connection.close()
    expect((await third).messageId).toBe('m3')
    const messages = await tap.waitForCount(3, 5_000)
    expect(messages.map((m) => [m.messageId, m.body])).toEqual([
      ['m1', { n: 1 }],
      ['m3', { n: 3 }],
      ['m1', { n: 1 }],
    ])
    expect(tap.countsById()).toEqual(
      new Map([
        ['m1', 2],
        ['m3', 1],
      ]),
    )
    expect(tap.chain('o1').map((m) => m.messageId)).toEqual(['m1', 'm1'])
    await expect(tap.waitFor((m) => m.routingKey === 'b.two', 200, 'b.two')).rejects.toThrow(
      /no b.two within 200 ms/,
    )
  })

  it('when broker objects are deleted by prefix, then none with that prefix is left', async () => {
    const prefix = uniqueName('testkit_prefix')
    const connection = await amqp.connect(AMQP_URL)
    const channel = await connection.createChannel()
    await channel.assertExchange(`${prefix}.ex`, 'topic')
    await channel.assertQueue(`${prefix}.q`)
    await connection.close()
    await deleteBrokerObjects({ prefix })
    const check = await amqp.connect(AMQP_URL)
    check.on('error', () => undefined)
    const probe = await check.createChannel()
    probe.on('error', () => undefined)
    await expect(probe.checkQueue(`${prefix}.q`)).rejects.toThrow(/NOT_FOUND/)
    await check.close().catch(() => undefined)
  })
})
