import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { runMigrations } from '@saga/service-kit'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { PrismaClient } from '../../src/generated/prisma/client.js'

const MIGRATIONS = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/** A per-run database with this service's migrations applied (service-kit's runner) and Prisma on it. */
export interface ServiceTestDatabase extends TestDatabase {
  prisma: PrismaClient
}

/** Creates `<prefix>_<random>` via testkit and migrates it; `drop()` disconnects Prisma and drops it. */
export async function createServiceTestDatabase(prefix: string): Promise<ServiceTestDatabase> {
  const db = await createTestDatabase({ prefix })
  const prisma = new PrismaClient({ adapter: new PrismaPg(db.pool) })
  const drop = async () => {
    await prisma.$disconnect()
    await db.drop()
  }
  try {
    await runMigrations({ pool: db.pool, migrationsDir: MIGRATIONS })
  } catch (error) {
    await drop()
    throw error
  }
  return { ...db, prisma, drop }
}
