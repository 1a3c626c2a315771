import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServiceUnderTest, type InjectableApp, type ServiceUnderTest } from './service-under-test.js'

/**
 * The health suite every service runs (a vitest `describe` of its own): booted by
 * `startServiceUnderTest` on a fresh database and broker names, the service migrates itself and
 * answers ready with database, broker and outbox up; it serves its OpenAPI document and `/metrics`
 * with `saga_messaging_broker_up{saga_service}` 1. `more` adds the service's own cases on the same
 * running service (`get()` returns it once booted).
 * @param service the service name (database and queue prefix, the metric's label)
 * @param start boots the app from the environment, as `startServiceUnderTest` takes it
 */
export function describeServiceHealth<A extends InjectableApp>(
  service: string,
  start: (env: Record<string, string>) => Promise<A>,
  more?: (get: () => ServiceUnderTest<A>) => void,
): void {
  let s: ServiceUnderTest<A> | undefined
  const get = (): ServiceUnderTest<A> => {
    if (!s) throw new Error(`${service} did not boot`)
    return s
  }
  beforeAll(async () => {
    s = await startServiceUnderTest(service, start)
  })
  afterAll(async () => {
    await s?.close()
  })

  describe(`${service} service health`, () => {
    it('when booted on a fresh database, then migrations ran and ready is 200 with every dependency up', async () => {
      const { statusCode, body } = await get().readyUntil((code) => code === 200)
      expect(statusCode).toBe(200)
      expect(body.checks).toMatchObject({
        database: { status: 'up' },
        broker: { status: 'up' },
        outbox: { status: 'up' },
      })
      const { rows } = await get().db.pool.query<{ migration_name: string }>(
        'SELECT migration_name FROM _prisma_migrations',
      )
      expect(rows.map((r) => r.migration_name)).toContain('20261129000000_messaging')
    })

    it('when the OpenAPI document and metrics are requested, then both are served', async () => {
      const doc = await get().app.inject({ method: 'GET', url: '/documentation/json' })
      expect(doc.statusCode).toBe(200)
      expect(doc.json<{ openapi: string }>().openapi).toMatch(/^3\./)
      const metrics = await get().app.inject({ method: 'GET', url: '/metrics' })
      expect(metrics.body).toContain(`saga_messaging_broker_up{saga_service="${service}"} 1`)
    })

    more?.(get)
  })
}
