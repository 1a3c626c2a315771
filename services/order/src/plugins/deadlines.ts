import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  createDeadlineScheduler,
  type DeadlineScheduler,
  type DeadlineSchedulerOptions,
} from '../deadlines/scheduler.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The deadline scheduler of this instance (see `createDeadlineScheduler`). */
    deadlines: DeadlineScheduler
  }
}

/**
 * The deadline scheduler as a plugin, started and stopped with the app like messaging's relay:
 * started when the app is ready (its first claim fires the deadlines that passed while the service
 * was down), stopped in `preClose`, before the database plugin ends the pool. Named `deadlines`;
 * depends on `db` and `messaging` (it writes in `messaging`'s transactions).
 */
export const deadlinesPlugin = fp(
  (app: FastifyInstance, options: Omit<DeadlineSchedulerOptions, 'database' | 'logger'>, done) => {
    const scheduler = createDeadlineScheduler({ ...options, database: app.messaging, logger: app.log })
    app.decorate('deadlines', scheduler)
    app.addHook('onReady', (hookDone) => {
      scheduler.start()
      hookDone()
    })
    app.addHook('preClose', async () => {
      await scheduler.stop()
    })
    done()
  },
  { name: 'deadlines', dependencies: ['db', 'messaging'], fastify: '5.x' },
)
