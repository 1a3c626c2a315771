import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootstrapDatabases, dropDatabases, serviceDatabases } from '../src/bootstrap.js'
import { amqpUrlFor, brokerUsers, deleteBrokerUsers, ensureBrokerUsers } from '../src/broker-users.js'
import { fleetBrokerNames } from '../src/start-env.js'
import { runNode } from './cli-processes.js'

const run = promisify(execFile)
const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const bootstrapEntry = fileURLToPath(new URL('../dist/bootstrap-cli.js', import.meta.url))
const prefix = `t${randomBytes(3).toString('hex')}_`
const names = fleetBrokerNames(prefix, {})
const users = brokerUsers({ userPrefix: prefix, ...names })
// What npm start's services declare: each handler's queue and its dead-letter queue.
const fleetQueues = [
  `${prefix}order.record-timeline`,
  `${prefix}order.record-timeline.dlq`,
  `${prefix}payment.process-payment-when-order-created`,
  `${prefix}inventory.reserve-stock-when-payment-processed.dlq`,
]
// Not the fleet's: a name that only starts like one of its prefixes, and another prefix's queue.
const bystanders = [`${prefix}orders.kept`, `x${prefix}order.kept`]

// The test's queues that exist now, each checked over AMQP (a passive declare; a missing queue
// closes the channel with 404), which costs far less than a rabbitmqctl run.
const queuesNow = async () => {
  const connection = await amqp.connect(amqpUrl)
  connection.on('error', () => undefined)
  try {
    const found: string[] = []
    for (const queue of [...fleetQueues, ...bystanders]) {
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      const exists = await channel.checkQueue(queue).then(
        () => true,
        () => false,
      )
      if (exists) {
        found.push(queue)
        await channel.close()
      }
    }
    return found
  } finally {
    await connection.close().catch(() => undefined)
  }
}
const usersNow = async () =>
  (
    JSON.parse((await run('rabbitmqctl', ['-q', 'list_users', '--formatter', 'json'])).stdout) as {
      user: string
    }[]
  )
    .map((u) => u.user)
    .filter((user) => user.startsWith(prefix))
const databasesNow = async () => {
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname = ANY($1)',
      [serviceDatabases({ prefix }).map((d) => d.database)],
    )
    return rows.map((r) => r.datname)
  } finally {
    await admin.end()
  }
}
const exchangeExists = async () => {
  const connection = await amqp.connect(amqpUrl)
  connection.on('error', () => undefined)
  try {
    const channel = await connection.createChannel()
    channel.on('error', () => undefined)
    return await channel.checkExchange(names.exchange).then(
      () => true,
      () => false,
    )
  } finally {
    await connection.close().catch(() => undefined)
  }
}

beforeAll(async () => {
  await bootstrapDatabases({ postgresUrl, prefix })
  await ensureBrokerUsers(users, '/')
  const connection = await amqp.connect(amqpUrl)
  try {
    const channel = await connection.createChannel()
    await channel.assertExchange(names.exchange, 'topic', { durable: true })
    for (const queue of [...fleetQueues, ...bystanders]) await channel.assertQueue(queue, { durable: true })
  } finally {
    await connection.close()
  }
})

afterAll(async () => {
  const connection = await amqp.connect(amqpUrl)
  try {
    const channel = await connection.createChannel()
    for (const queue of [...fleetQueues, ...bystanders]) await channel.deleteQueue(queue)
    await channel.deleteExchange(names.exchange)
  } finally {
    await connection.close()
  }
  await deleteBrokerUsers(users)
  await dropDatabases({ postgresUrl, prefix })
})

// A drop runs rabbitmqctl seven times (an Erlang VM each, about a second of CPU): on a loaded
// machine one drop took 33 s, so these limits only catch a hang.
const DROP_LIMIT_MS = 100_000

describe('npm run bootstrap -- --prefix <p> --drop', { timeout: 2 * DROP_LIMIT_MS }, () => {
  const env = { POSTGRES_URL: postgresUrl, AMQP_URL: amqpUrl }

  it('when rabbitmqctl cannot be run, then it exits 1 naming the command, and nothing is dropped', async () => {
    const refused = await runNode(bootstrapEntry, ['--prefix', prefix, '--drop'], {
      ...env,
      RABBITMQCTL: '/nonexistent/rabbitmqctl',
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`Cannot tell whether the ${prefix} fleet is still running`)
    expect(refused.stderr).toContain('/nonexistent/rabbitmqctl list_connections')
    expect(await databasesNow()).toHaveLength(4)
    expect(await usersNow()).toHaveLength(4)
  })

  it('when the fleet is still connected to its database and broker, then nothing is dropped and it says what is open', async () => {
    const [order] = serviceDatabases({ prefix })
    const session = new pg.Client({
      connectionString: postgresUrl.replace(/\/postgres$/, `/${order!.database}`),
    })
    await session.connect()
    const service = await amqp.connect(amqpUrlFor(users[1]!, amqpUrl))
    try {
      const refused = await runNode(bootstrapEntry, ['--prefix', prefix, '--drop'], env, DROP_LIMIT_MS)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`The ${prefix} fleet is still connected, so nothing was dropped`)
      expect(refused.stderr).toContain(`1 session(s) on database ${order!.database}`)
      expect(refused.stderr).toContain(`1 broker connection(s) as ${users[1]!.user}`)
      expect(await databasesNow()).toHaveLength(4)
      expect((await queuesNow()).sort()).toEqual([...fleetQueues, ...bystanders].sort())
      expect(await exchangeExists()).toBe(true)
      expect(await usersNow()).toHaveLength(4)
    } finally {
      await session.end()
      await service.close()
    }
  })

  it("when a fleet's databases and broker objects exist, then it removes them all and nothing else", async () => {
    expect(await databasesNow()).toHaveLength(4)
    expect((await queuesNow()).sort()).toEqual([...fleetQueues, ...bystanders].sort())

    const dropped = await runNode(bootstrapEntry, ['--prefix', prefix, '--drop'], env, DROP_LIMIT_MS)
    expect(dropped.stderr).toBe('')
    expect(dropped.code).toBe(0)
    expect(dropped.stdout).toContain(`dropped the ${prefix} service databases and roles`)
    expect(dropped.stdout).toContain(
      `deleted the ${prefix} fleet's 4 queues, exchange ${names.exchange} and broker users ` +
        users.map((u) => u.user).join(', '),
    )
    expect(await databasesNow()).toEqual([])
    expect((await queuesNow()).sort()).toEqual([...bystanders].sort())
    expect(await exchangeExists()).toBe(false)
    expect(await usersNow()).toEqual([])
  })

  it('when the prefix is empty, then it is a usage error and nothing is dropped (not the unprefixed fleet)', async () => {
    const refused = await runNode(bootstrapEntry, ['--prefix', '', '--drop'], env)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('give a prefix, or leave --prefix out for the unprefixed fleet')
  })

  it('when run again, then there is nothing left to remove and it still succeeds', async () => {
    const again = await runNode(bootstrapEntry, ['--prefix', prefix, '--drop'], env, DROP_LIMIT_MS)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(
      `deleted the ${prefix} fleet's 0 queues, exchange ${names.exchange} and broker users (none left)`,
    )
  })

  it('when queues of another fleet are bound to the exchange (a shared AMQP_EXCHANGE), then the exchange is kept and it says so', async () => {
    const connection = await amqp.connect(amqpUrl)
    try {
      const channel = await connection.createChannel()
      await channel.assertExchange(names.exchange, 'topic', { durable: true })
      await channel.bindQueue(bystanders[1]!, names.exchange, '#')
    } finally {
      await connection.close()
    }
    const dropped = await runNode(bootstrapEntry, ['--prefix', prefix, '--drop'], env, DROP_LIMIT_MS)
    expect(dropped.code).toBe(0)
    expect(dropped.stdout).toContain(
      `kept exchange ${names.exchange}: queues of another fleet are still bound to it`,
    )
    expect(await exchangeExists()).toBe(true)
  })
})
