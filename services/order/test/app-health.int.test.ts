import { describeServiceHealth, whenReady } from '@saga/testkit'
import { expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

describeServiceHealth(
  'order',
  (env) => whenReady(buildApp(loadConfig(env), { fastify: { logger: false } })),
  (get) => {
    it('when the broker link is cut, then ready stays 200 (orders are still accepted into the outbox), the broker is reported down, live stays 200, and the report recovers', async () => {
      get().amqpProxy.cut()
      const down = await get().readyUntil((_code, body) => body.checks.broker?.status === 'down')
      expect(down.statusCode).toBe(200)
      expect(down.body.checks).toMatchObject({ broker: { status: 'down' }, database: { status: 'up' } })
      expect((await get().app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)

      get().amqpProxy.restore()
      const up = await get().readyUntil((code, body) => code === 200 && body.checks.broker?.status === 'up')
      expect(up.body.checks.broker?.status).toBe('up')
    })

    it('when the database link is cut, then ready is 503 naming the database, live stays 200, and ready recovers', async () => {
      get().pgProxy.cut()
      const down = await get().readyUntil(
        (code, body) => code === 503 && body.checks.database?.status === 'down',
      )
      expect(down.statusCode).toBe(503)
      expect(down.body.checks.database?.status).toBe('down')
      expect((await get().app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)

      get().pgProxy.restore()
      const up = await get().readyUntil((code) => code === 200)
      expect(up.statusCode).toBe(200)
    })
  },
)
