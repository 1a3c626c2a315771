import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { createTestDatabase, deleteBrokerObjects, type TestDatabase } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseEnv, infra, runNames } from '../src/run.js'
import { repoRoot, ServiceProcess } from '../src/service-process.js'

// freePort() can only say a port was free when asked: this takes the chosen port before the service
// binds it, which is the race every fleet start runs.
describe('a service whose chosen port is taken before it binds', () => {
  const names = runNames()
  const logDir = path.join(repoRoot, 'e2e', '.runs', names.id)
  let db: TestDatabase | undefined
  let squatter: net.Server | undefined
  let proc: ServiceProcess | undefined

  beforeAll(async () => {
    fs.mkdirSync(logDir, { recursive: true })
    db = await createTestDatabase({ prefix: `${names.id}_port` })
    // Holds the port and drops whatever connects (the readiness polls of the first start).
    squatter = net.createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => squatter?.listen(0, '127.0.0.1', resolve))
  })

  afterAll(async () => {
    await proc?.stop(5_000)
    await new Promise((resolve) => squatter?.close(resolve))
    await db?.drop()
    await deleteBrokerObjects({ prefix: `${names.id}.`, exchanges: [names.exchange] }, infra.amqpUrl)
    fs.rmSync(logDir, { recursive: true, force: true })
  })

  it('when the port is in use, then the instance is started again on another port and becomes ready', async () => {
    const taken = (squatter?.address() as net.AddressInfo).port
    proc = new ServiceProcess(
      'payment',
      'payment#1',
      taken,
      {
        ...baseEnv(),
        HOST: '127.0.0.1',
        PORT: String(taken),
        LOG_LEVEL: 'info',
        DATABASE_URL: db?.url ?? '',
        AMQP_URL: infra.amqpUrl,
        AMQP_EXCHANGE: names.exchange,
        AMQP_QUEUE_PREFIX: names.queuePrefix.payment,
      },
      path.join(logDir, 'payment-1.log'),
    )
    proc.start()
    await proc.waitReady(120_000)

    expect(proc.port).not.toBe(taken)
    expect(proc.env.PORT).toBe(String(proc.port))
    expect(proc.starts).toBeGreaterThanOrEqual(2)
    expect(fs.readFileSync(proc.logFile, 'utf8')).toContain('EADDRINUSE')
    const res = await fetch(`${proc.url}/health/ready`)
    expect(res.status).toBe(200)
  })
})
