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

/** Creates `<prefix>_<random>` via testkit, migrates it; `drop()` disconnects Prisma and drops it. */
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

/** The outbox rows of one order in enqueue order (ids are UUIDv7): what this service will publish about it. */
export async function outboxOf(db: ServiceTestDatabase, orderId: string) {
  const { rows } = await db.pool.query<{
    type: string
    routing_key: string
    payload: unknown
    headers: Record<string, string>
  }>('SELECT type, routing_key, payload, headers FROM outbox_message WHERE aggregate_id = $1 ORDER BY id', [
    orderId,
  ])
  return rows
}
