import { hostname } from 'node:os'
import amqp from 'amqplib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  TcpProxy,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { firstAddress } from '../src/amqp/broker-addresses.js'
import { createAmqpConnection, type AmqpConnection } from '../src/amqp/connection.js'
import { pgDatabase } from '../src/database.js'
import { createMessaging, type Messaging } from '../src/messaging.js'
import type { HealthArea } from '../src/observability/health.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { memoryLogger } from '../src/testing/index.js'
import { deadLetterQueueName, queueName } from '../src/topology.js'
import type { HandlerDefinition } from '../src/types.js'
import { brokerProxy } from './broker-proxy.js'
import { eventually, happened, insertEffect, MESSAGING_SQL, type Happened, type Tx } from './inbox-fixture.js'

// Three "nodes" of a cluster: three TCP proxies in front of the one test broker, each of which a
// test can cut as a node that goes away.

const HANDLER = 'count-when-happened'
const countWhenHappened: HandlerDefinition<Tx, Happened> = {
  name: HANDLER,
  message: happened,
  handle: (message, tx) => insertEffect(tx, HANDLER, message),
}

let db: TestDatabase
/** The test broker's `cluster_name`, as it tells every connection. */
let cluster: string
let proxies: TcpProxy[] = []
const exchange = uniqueName('cluster_ex')
const prefix = uniqueName('cluster')
const closing: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = []

/** The address list of `proxies`, as an operator writes it for a three-node cluster. */
const clusterUrl = (): string => proxies.map((proxy) => proxy.url(AMQP_URL)).join(', ')
/** The index of the address a connection named `name` tries first (the connection's own key). */
const firstOf = (name: string): number => firstAddress(`${hostname()}/${process.pid}/${name}`, proxies.length)

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'cluster', sqlFiles: [MESSAGING_SQL] })
  const probe = await amqp.connect(AMQP_URL)
  cluster = String(probe.connection.serverProperties.cluster_name)
  await probe.close()
  await db.pool.query(
    'CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer, attempt integer)',
  )
})
afterEach(async () => {
  for (const part of closing.splice(0)) await ('stop' in part ? part.stop() : part.close())
  for (const proxy of proxies.splice(0)) await proxy.close()
})
afterAll(async () => {
  const queue = queueName(prefix, HANDLER)
  await deleteBrokerObjects({ exchanges: [exchange], queues: [queue, deadLetterQueueName(queue)] })
  await db?.drop()
})

/** Messaging of `service` with one handler, on the cluster of `proxies`, started. */
async function startMessaging(
  service: string,
  logger: ReturnType<typeof memoryLogger>,
): Promise<Messaging<Tx>> {
  const messaging = createMessaging<Tx>({
    service,
    database: pgDatabase(db.pool),
    pool: db.pool,
    amqpUrl: clusterUrl(),
    exchange,
    queuePrefix: prefix,
    handlers: [countWhenHappened],
    relay: { statsIntervalMs: 100, retentionIntervalMs: 0 },
    logger,
  })
  closing.push(messaging)
  await messaging.start()
  return messaging
}

/** The consumers the broker counts on a handler's queue now. */
async function consumersOf(handler: string): Promise<number> {
  const admin = await amqp.connect(AMQP_URL)
  try {
    return (await (await admin.createChannel()).checkQueue(queueName(prefix, handler))).consumerCount
  } finally {
    await admin.close()
  }
}

describe('a connection to a cluster (several broker addresses)', () => {
  it('when the address it tries first is dead at start, then it connects through the next and names that node in its log line', async () => {
    proxies = [await brokerProxy(), await brokerProxy()]
    const name = uniqueName('first-dead')
    const dead = firstOf(name)
    const live = proxies[1 - dead] as TcpProxy
    proxies[dead]?.cut()
    const lines = memoryLogger()
    const connection: AmqpConnection = createAmqpConnection({ url: clusterUrl(), name, logger: lines })
    closing.push(connection)
    connection.start()

    await connection.waitForConnection(10_000)
    expect(connection.node).toEqual({ address: live.address, cluster })
    const failed = lines.lines.find((line) => line.msg === 'amqp connect failed; retrying')
    expect((failed?.obj as { url?: string } | undefined)?.url).toContain(`@${proxies[dead]?.address}`)
    // A connection that reached no broker yet says "back after" once one answers: the line names the node.
    const connected = lines.lines.find((line) => line.msg?.startsWith('amqp connection back after'))
    expect(connected?.obj).toMatchObject({
      connection: name,
      broker: live.address,
      cluster,
    })
    // host:port and a redacted URL only: the password never reaches a log line.
    expect(JSON.stringify(lines.lines)).not.toContain(':guest@')
  })

  it('when the node a consumer is on goes while it consumes, then it reconnects through another, its queue is consumed again, and a message published after the cut is handled once', async () => {
    proxies = [await brokerProxy(), await brokerProxy(), await brokerProxy()]
    const lines = memoryLogger()
    const service = uniqueName('svc')
    const messaging = await startMessaging(service, lines)
    await eventually('healthy', () => messaging.health().ok)
    const broker = (): HealthArea['facts'] =>
      (messaging.health().areas.find((a) => a.area === 'broker') as HealthArea).facts
    const addresses = proxies.map((proxy) => proxy.address)
    const before = broker()
    expect(before.brokerCluster).toBe(cluster)
    expect(addresses).toContain(before.consumerBroker)
    expect(addresses).toContain(before.relayBroker)
    const lost = addresses.indexOf(before.consumerBroker as string)
    expect(lost).toBe(firstOf(`${service}-consumer`))

    proxies[lost]?.cut()
    await eventually('the consumer on another node', () => {
      const now = broker().consumerBroker
      return now !== null && now !== before.consumerBroker
    })
    await eventually('every queue consumed again', () => messaging.health().ok)
    const id = await messaging.transaction((tx) =>
      enqueue(tx, {
        type: happened.type,
        routingKey: happened.routingKey,
        payload: { n: 7 },
        aggregateId: 'o-7',
        correlationId: 'o-7',
      }),
    )
    await messaging.signals.waitFor('handled', (s) => s.id === id, 30_000)

    const { rows } = await db.pool.query('SELECT message_id FROM effect WHERE message_id = $1', [id])
    expect(rows).toHaveLength(1)
    // The broker's side: the queue has exactly one consumer again, not zero, not an orphan beside it.
    // (The broker drops the cut connection's consumer once it reads the close: waited for, not assumed.)
    await eventually('one consumer on the queue', async () => (await consumersOf(HANDLER)) === 1, 10_000)
    const consumerLine = (msg: string) =>
      lines.lines.find(
        (line) =>
          line.msg?.startsWith(msg) &&
          (line.obj as { connection?: string }).connection === `${service}-consumer`,
      )?.obj
    expect(consumerLine('amqp connection lost')).toMatchObject({ broker: before.consumerBroker })
    expect(consumerLine('amqp connection back after')).toMatchObject({ broker: broker().consumerBroker })
  })
})
