import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { runMigrations } from '@saga/service-kit'
import { createMigratedDatabase, type TestDatabase } from '@saga/testkit'
import { PrismaClient } from '../../src/generated/prisma/client.js'

const MIGRATIONS = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/** A per-run database with this service's migrations applied (service-kit's runner) and Prisma on it. */
export interface ServiceTestDatabase extends TestDatabase {
  prisma: PrismaClient
}

/** Creates `<prefix>_<random>` via testkit and migrates it; `drop()` disconnects Prisma and drops it. */
export async function createServiceTestDatabase(prefix: string): Promise<ServiceTestDatabase> {
  const db = await createMigratedDatabase({
    prefix,
    migrate: (pool) => runMigrations({ pool, migrationsDir: MIGRATIONS }),
    client: (pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
  })
  return { ...db, prisma: db.client }
}
