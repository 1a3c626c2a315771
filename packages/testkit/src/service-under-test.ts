import { AMQP_URL, deleteBrokerObjects } from './broker.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { uniqueName } from './names.js'
import { TcpProxy } from './tcp-proxy.js'

/** What the fixture needs of a fastify app: `inject` (light-my-request) and `close`. */
export interface InjectableApp {
  inject(options: { method: 'GET'; url: string }): Promise<{ statusCode: number; body: string; json<T>(): T }>
  close(): Promise<unknown>
}

/** A `/health/ready` answer: overall status and one entry per dependency check. */
export interface ReadyBody {
  status: string
  checks: Record<string, { status: string }>
}

/** A service app booted on its own database and broker names, both reached through TCP proxies. */
export interface ServiceUnderTest<A extends InjectableApp> {
  app: A
  db: TestDatabase
  /** Between the app and PostgreSQL: `cut()` it to take the database away. */
  pgProxy: TcpProxy
  /** Between the app and RabbitMQ: `cut()` it to take the broker away. */
  amqpProxy: TcpProxy
  /** Polls /health/ready every 100 ms until `accept` holds or 15 s pass; returns the last answer. */
  readyUntil(
    accept: (statusCode: number, body: ReadyBody) => boolean,
  ): Promise<{ statusCode: number; body: ReadyBody }>
  /** Closes the app and proxies, deletes the broker objects and drops the database. */
  close(): Promise<void>
}

/**
 * Boots a service the way its health tests need it: a fresh database (migrated by the service
 * itself at start), a unique exchange and queue prefix, and both links through a `TcpProxy`.
 * `start` gets the environment (DATABASE_URL, AMQP_URL, AMQP_EXCHANGE, AMQP_QUEUE_PREFIX,
 * LOG_LEVEL, PORT) and returns the ready app, e.g.
 * `(env) => buildApp(loadConfig(env), { fastify: { logger: false } })`.
 * @param service the service name; prefixes the database and queue names of the run
 * @param options.adminUrl the server to make the database on (default `POSTGRES_URL`), e.g. a
 *   `startPrivatePostgres()` one
 */
export async function startServiceUnderTest<A extends InjectableApp>(
  service: string,
  start: (env: Record<string, string>) => Promise<A>,
  options: { adminUrl?: string } = {},
): Promise<ServiceUnderTest<A>> {
  const exchange = uniqueName('health_ex')
  const queuePrefix = uniqueName(`health_${service}`)
  const db = await createTestDatabase({ prefix: `health_${service}`, ...options })
  const dbUrl = new URL(db.url)
  const amqpUrl = new URL(AMQP_URL)
  const pgProxy = await TcpProxy.start(dbUrl.hostname, Number(dbUrl.port || 5432))
  const amqpProxy = await TcpProxy.start(amqpUrl.hostname, Number(amqpUrl.port || 5672))
  const cleanUp = async (): Promise<void> => {
    await pgProxy.close()
    await amqpProxy.close()
    await deleteBrokerObjects({ prefix: queuePrefix, exchanges: [exchange] })
    await db.drop()
  }
  let app: A
  try {
    app = await start({
      DATABASE_URL: pgProxy.url(db.url),
      AMQP_URL: amqpProxy.url(AMQP_URL),
      AMQP_EXCHANGE: exchange,
      AMQP_QUEUE_PREFIX: queuePrefix,
      LOG_LEVEL: 'silent',
      PORT: '0',
    })
  } catch (error) {
    // A service that fails to boot must not leave its database and queues behind.
    await cleanUp()
    throw error
  }

  return {
    app,
    db,
    pgProxy,
    amqpProxy,
    async readyUntil(accept) {
      const deadline = Date.now() + 15_000
      for (;;) {
        const res = await app.inject({ method: 'GET', url: '/health/ready' })
        const body = res.json<ReadyBody>()
        if (accept(res.statusCode, body) || Date.now() > deadline) return { statusCode: res.statusCode, body }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    async close() {
      await app.close()
      await cleanUp()
    },
  }
}
