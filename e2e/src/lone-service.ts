import fs from 'node:fs'
import path from 'node:path'
import {
  createTestDatabase,
  deleteBrokerObjects,
  freePort,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { baseEnv, infra, type ServiceName } from './run.js'
import { repoRoot, ServiceProcess } from './service-process.js'

/** One service process on a database and broker names of its own, for tests of a single process. */
export interface LoneService {
  proc: ServiceProcess
  db: TestDatabase
  /** The queue prefix and exchange of the run (deleted by `close`). */
  queuePrefix: string
  exchange: string
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  /**
   * Stops the process (SIGTERM, then SIGKILL), drops the database, deletes the broker names and the
   * log (kept with E2E_KEEP_LOGS set).
   */
  close(): Promise<void>
}

/**
 * Starts `node services/<service>/dist/server.js` on a fresh database (migrated by the service at
 * start) with its own exchange and queue prefix, logging JSON at `LOG_LEVEL` (default info) to a
 * file under e2e/.runs/. `env` overrides any variable; the process is started but not awaited:
 * call `proc.waitReady()` for a service expected to start.
 */
export async function startLoneService(
  service: ServiceName,
  env: Record<string, string> = {},
): Promise<LoneService> {
  const id = uniqueName(`lone_${service}`)
  const db = await createTestDatabase({ prefix: id })
  const queuePrefix = `${id}.${service}`
  const exchange = `${id}.events`
  const logDir = path.join(repoRoot, 'e2e', '.runs', id)
  fs.mkdirSync(logDir, { recursive: true })
  const logFile = path.join(logDir, `${service}.log`)
  const port = await freePort()
  const proc = new ServiceProcess(
    service,
    service,
    port,
    {
      ...baseEnv(),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATABASE_URL: db.url,
      AMQP_URL: infra.amqpUrl,
      AMQP_EXCHANGE: exchange,
      AMQP_QUEUE_PREFIX: queuePrefix,
      ...env,
    },
    logFile,
  )
  proc.start()
  return {
    proc,
    db,
    queuePrefix,
    exchange,
    output: () => fs.readFileSync(logFile, 'utf8'),
    async close() {
      await proc.stop(10_000)
      await db.drop()
      await deleteBrokerObjects({ prefix: `${id}.`, exchanges: [exchange] }, infra.amqpUrl)
      if (!process.env.E2E_KEEP_LOGS) fs.rmSync(logDir, { recursive: true, force: true })
    },
  }
}
