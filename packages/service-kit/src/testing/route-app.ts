import type { ServiceName } from '@saga/contracts'
import { useFixture } from '@saga/testkit'
import { createServiceApp, type ServiceApp } from '../app.js'

/**
 * The fixture of a route test: the fleet's app defaults (`createServiceApp`: error handler, zod,
 * OpenAPI; silent logs) for `service`, with what `register` adds (the routes under test), ready.
 * Registers its set-up before the tests of the enclosing `describe` (or file) and its close after
 * them, and returns a stand-in for the app (testkit's `useFixture`): e.g.
 * `const app = useRouteApp('inventory', (app) => app.register(stockRoutes, { db: db.prisma }))`, then
 * `app.inject(…)` in a test. `register` runs in the set-up, so it may read fixtures registered before.
 */
export function useRouteApp(
  service: ServiceName,
  register: (app: ServiceApp) => PromiseLike<unknown>,
): ServiceApp {
  return useFixture(
    async () => {
      const app = await createServiceApp({ service, logLevel: 'silent', fastify: { logger: false } })
      await register(app)
      await app.ready()
      return app
    },
    (app) => app.close(),
  )
}
