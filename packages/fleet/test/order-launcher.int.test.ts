import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { AMQP_URL, createTestDatabase, deleteBrokerObjects, type TestDatabase } from '@saga/testkit'
import amqp from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICES, type ServiceName } from '../src/cli/settings.js'
import { closedUrl, orderCliEntry, runNode, serve } from './cli-processes.js'

const run = promisify(execFile)
const launcher = fileURLToPath(new URL('../bin/order.js', import.meta.url))
const root = fileURLToPath(new URL('../../../', import.meta.url))
const messagingSql = fileURLToPath(new URL('../../messaging/sql/messaging.sql', import.meta.url))

/** Runs the built CLI; resolves with its exit code and output whatever the code. */
const order = (args: string[], env: Record<string, string>) => runNode(orderCliEntry, args, env)

describe('npm run order (bin/order.js)', () => {
  it('when the CLI is not built, then it says to build first and exits 1 without a stack trace', async () => {
    const unbuilt = mkdtempSync(join(tmpdir(), 'saga-unbuilt-'))
    try {
      cpSync(launcher, join(unbuilt, 'bin', 'order.js'))
      const failure = await run('node', [join(unbuilt, 'bin', 'order.js'), 'help']).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      )
      expect(failure?.code).toBe(1)
      expect(failure?.stderr).toContain('not built yet')
      expect(failure?.stderr).toContain('npm run build')
      expect(failure?.stderr).not.toMatch(/\n\s+at /)
    } finally {
      rmSync(unbuilt, { recursive: true, force: true })
    }
  })

  it('when the CLI is built, then the launcher runs it with the arguments given', async () => {
    const { stdout } = await run('node', [launcher, 'help'])
    expect(stdout).toContain('Usage: npm run order -- [--prefix <p>] <command>')
  })

  // npm prints `> node packages/fleet/bin/order.js cancel ***`: it redacts anything shaped like a
  // UUID in the lines it writes itself (old npm tokens were UUIDs). The script gets the id as typed.
  it('when an order id goes through npm run order, then the CLI receives it intact (npm only masks it in its own banner), and -s drops the banner', async () => {
    const paths: string[] = []
    const server = createServer((request, response) => {
      paths.push(`${request.method} ${request.url}`)
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ status: 'CANCELLED', cancellationReason: 'customer_requested' }))
    }).listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    try {
      const id = randomUUID()
      const env = { ...process.env, ORDER_SERVICE_URL: `http://127.0.0.1:${port}` }
      const plain = await run('npm', ['run', 'order', '--', 'cancel', id], { cwd: root, env })
      expect(paths).toEqual([`POST /orders/${id}/cancel`])
      expect(plain.stdout).toContain(`order ${id}: CANCELLED (customer_requested)`)

      const silent = await run('npm', ['run', '-s', 'order', '--', 'cancel', id], { cwd: root, env })
      expect(paths).toHaveLength(2)
      expect(paths[1]).toBe(`POST /orders/${id}/cancel`)
      expect(silent.stdout).toBe(`order ${id}: CANCELLED (customer_requested)\n`)
      expect(`${silent.stdout}${silent.stderr}`).not.toContain('***')
    } finally {
      server.close()
    }
  })
})

describe('the order CLI against fakes of the fleet and real outbox tables', () => {
  it('when the order service does not answer, then where, cancel, follow and place print one and the same message', async () => {
    const orderUrl = await closedUrl()
    const nowhere = await closedUrl()
    const port = new URL(nowhere).port
    const env: Record<string, string> = { ORDER_SERVICE_URL: orderUrl, AMQP_URL: `amqp://127.0.0.1:${port}` }
    for (const service of SERVICES)
      env[`${service.toUpperCase()}_DATABASE_URL`] = `postgres://x:x@127.0.0.1:${port}/x`
    const expected = `the order service at ${orderUrl} did not answer (connect ECONNREFUSED 127.0.0.1:${new URL(orderUrl).port}); is the fleet running (npm start)?`
    const id = randomUUID()
    for (const args of [
      ['where', id],
      ['cancel', id],
      ['follow', id],
      ['place', '--sku', 'MUG-001'],
    ]) {
      const result = await order(args, env)
      expect(`${result.stdout}${result.stderr}`, args[0]).toContain(expected)
      expect(`${result.stdout}${result.stderr}`, args[0]).not.toContain('fetch failed')
    }
  })

  it('when --prefix names a fleet whose exchange the broker does not have, then place --follow says so and names --prefix, not a broker outage', async () => {
    const orderId = randomUUID()
    const orderService = await serve((_request, response) => {
      response.setHeader('content-type', 'application/json')
      response
        .writeHead(201)
        .end(JSON.stringify({ id: orderId, status: 'PENDING', total: { amount: 1, currency: 'EUR' } }))
    })
    try {
      const prefix = `nx${randomUUID().slice(0, 8)}_`
      const result = await order(['--prefix', prefix, 'place', '--sku', 'MUG-001', '--follow'], {
        ORDER_SERVICE_URL: orderService.url,
        AMQP_URL,
      })
      expect(result.code).toBe(1)
      expect(result.stdout).toContain(`order ${orderId} placed`)
      expect(result.stderr).toContain(`has no exchange '${prefix}saga.events'`)
      expect(result.stderr).toContain('give the CLI the same --prefix')
    } finally {
      await orderService.close()
    }
  })

  describe('with the four outbox tables', () => {
    const dbs = {} as Record<ServiceName, TestDatabase>
    const exchange = `cli-follow-${randomUUID()}`
    const createdAt = new Date('2026-11-30T12:00:00.000Z')
    const orderId = randomUUID()
    let orderService: Awaited<ReturnType<typeof serve>>
    let status = 'PENDING'
    let env: Record<string, string>

    beforeAll(async () => {
      for (const service of SERVICES)
        dbs[service] = await createTestDatabase({ prefix: `cli_${service}`, sqlFiles: [messagingSql] })
      orderService = await serve((request, response) => {
        response.setHeader('content-type', 'application/json')
        if (request.url !== `/orders/${orderId}`) return void response.writeHead(404).end('{}')
        response.end(JSON.stringify({ id: orderId, status, createdAt: createdAt.toISOString() }))
      })
      const connection = await amqp.connect(AMQP_URL)
      const channel = await connection.createChannel()
      await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false })
      await connection.close()
      env = { ORDER_SERVICE_URL: orderService.url, AMQP_URL, AMQP_EXCHANGE: exchange }
      for (const service of SERVICES) {
        env[`${service.toUpperCase()}_DATABASE_URL`] = dbs[service].url
        env[`${service.toUpperCase()}_QUEUE_PREFIX`] = `cli-${randomUUID()}`
      }
    })
    afterAll(async () => {
      await orderService?.close()
      await deleteBrokerObjects({ exchanges: [exchange] }, AMQP_URL).catch(() => undefined)
      for (const service of SERVICES) await dbs[service]?.drop()
    })

    /** A published outbox row whose event time (`headers.occurredAt`) is `createdAt + ms`; `occurred_at` is `writtenMs`. */
    const published = (service: ServiceName, type: string, routingKey: string, ms: number, writtenMs = ms) =>
      dbs[service].pool.query(
        `INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id, occurred_at, published_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
        [
          randomUUID(),
          type,
          routingKey,
          { orderId },
          { correlationId: orderId, occurredAt: new Date(createdAt.getTime() + ms).toISOString() },
          orderId,
          new Date(createdAt.getTime() + writtenMs),
        ],
      )

    it('when the order waits for payment, then where says whether payment answers its /health: not answering, or not committed yet', async () => {
      await published('order', 'order.created.v1', 'order.created', 0)
      const down = await closedUrl()
      const refused = await order(['where', orderId], { ...env, PAYMENT_SERVICE_URL: down })
      expect(refused.stdout).toContain('waiting for: payment.processed or payment.failed from payment')
      expect(refused.stdout).toContain(
        `  payment is not answering at ${down} (connect ECONNREFUSED 127.0.0.1:${new URL(down).port}): is it running?`,
      )
      expect(refused.stdout).not.toContain('has not committed its reaction yet')

      const probes: string[] = []
      const payment = await serve((request, response) => {
        probes.push(`${request.method} ${request.url}`)
        response.writeHead(503).end('{}')
      })
      try {
        const answering = await order(['where', orderId], { ...env, PAYMENT_SERVICE_URL: payment.url })
        // The health probe, and the dead letters of the order read through payment's admin surface.
        expect(probes.sort()).toEqual([
          `GET /admin/messaging/dead-letters?limit=1000&aggregateId=${orderId}`,
          'GET /health/live',
        ])
        expect(answering.stdout).toContain(
          '  the last fact was published; the consumer in payment has not committed its reaction yet',
        )
        expect(answering.stdout).not.toContain('is not answering')
      } finally {
        await payment.close()
      }
    })

    it('when a finished order is followed, then its facts print in time order with offsets from its createdAt', async () => {
      status = 'CONFIRMED'
      // Written (occurred_at) in another order than they happened: the event time rules.
      await published('payment', 'payment.processed.v1', 'payment.processed', 12, 70)
      await published('inventory', 'stock.reserved.v1', 'stock.reserved', 30, 20)
      await published('shipment', 'shipment.created.v1', 'shipment.created', 45, 45)
      await published('order', 'order.confirmed.v1', 'order.confirmed', 84, 50)
      const result = await order(['follow', orderId, '--timeout', '10000'], env)
      expect(result.code).toBe(0)
      const steps = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('  +'))
        .map((line) =>
          line
            .replace(/\s+[0-9a-f-]{36}$/, '')
            .replace(/\s+/g, ' ')
            .trim(),
        )
      expect(steps).toEqual([
        '+ 0 ms order.created.v1 order',
        '+ 12 ms payment.processed.v1 payment',
        '+ 30 ms stock.reserved.v1 inventory',
        '+ 45 ms shipment.created.v1 shipment',
        '+ 84 ms order.confirmed.v1 order',
      ])
      expect(result.stdout).toContain('final status: CONFIRMED')

      // where lists the same facts in the same (event time) order.
      const where = await order(['where', orderId], env)
      const facts = where.stdout
        .split('\n')
        .filter((line) => line.startsWith('  published '))
        .map((line) => line.split(/\s+/)[2])
      expect(facts).toEqual([
        'order.created.v1',
        'payment.processed.v1',
        'stock.reserved.v1',
        'shipment.created.v1',
        'order.confirmed.v1',
      ])
    })
  })
})
