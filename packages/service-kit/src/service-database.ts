import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import type { FastifyPluginAsync } from 'fastify'
import type pg from 'pg'
import {
  databasePlugin,
  type DatabaseConfig,
  type DatabaseDefinition,
  type DisconnectableClient,
} from './database-plugin.js'
import type { ServiceName } from './env.js'

/** A service's generated Prisma client class, made over a driver adapter (Prisma 7). */
export type PrismaClientClass<Client extends DisconnectableClient> = new (options: {
  adapter: PrismaPg
}) => Client

/** What `serviceDatabase` gives a service's src/plugins/db module. */
export interface ServiceDatabase<Client extends DisconnectableClient> {
  /** For `sagaService`: the service's prisma/migrations folder and its Prisma client over the pool. */
  database: DatabaseDefinition<Client>
  /** The service's `db` plugin alone (see `databasePlugin`), for tests of the database. Options: `{ config }`. */
  dbPlugin: FastifyPluginAsync<{ config: DatabaseConfig }>
}

/**
 * A service's database from its name, its generated `PrismaClient` class and the `import.meta.url` of
 * its src/plugins/db module: the migrations folder is the service's `prisma/migrations`, two folders up
 * from that module (the same from src/plugins and dist/plugins), and the client is Prisma over the
 * pool through @prisma/adapter-pg.
 */
export function serviceDatabase<Client extends DisconnectableClient>(
  service: ServiceName,
  PrismaClient: PrismaClientClass<Client>,
  dbModuleUrl: string,
): ServiceDatabase<Client> {
  const database = {
    migrationsDir: fileURLToPath(new URL('../../prisma/migrations', dbModuleUrl)),
    createClient: (pool: pg.Pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
  }
  return { database, dbPlugin: databasePlugin({ service, ...database }) }
}
