import { useShiftedTimeZones, type MessagingModels, type ShiftedTimeZones } from '@saga/testkit'
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import type { DatabaseConfig } from '../database-plugin.js'
import type { Environment } from '../env.js'

/**
 * testkit's `useShiftedTimeZones` for a service: the app it boots is a bare fastify with the service's
 * `db` plugin (`dbPlugin`, from `databasePlugin`) alone, configured by the service's `loadConfig` on
 * the per-run database (`LOG_LEVEL` silent); the inbox and outbox check runs through the Prisma
 * client that plugin decorates the app with (`app.prisma`). Call it inside a `describe`; returns
 * the fixture's getter, valid inside the tests.
 */
export function useServiceTimeZones(
  prefix: string,
  dbPlugin: FastifyPluginAsync<{ config: DatabaseConfig }>,
  loadConfig: (env: Environment) => DatabaseConfig,
): () => ShiftedTimeZones<FastifyInstance> {
  const boot = async (url: string): Promise<FastifyInstance> => {
    const app = Fastify({ logger: false })
    await app.register(dbPlugin, { config: loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' }) })
    await app.ready()
    return app
  }
  return useShiftedTimeZones(prefix, boot, { messaging: prismaOf })
}

/**
 * The client `databasePlugin` decorates the app with. Its type is the service's own (each service
 * declares `app.prisma`); every service's client has the inbox and outbox models.
 */
function prismaOf(app: FastifyInstance): MessagingModels {
  return (app as FastifyInstance & { prisma: MessagingModels }).prisma
}
