import { createMigratedDatabase, useFixture, type TestDatabase } from '@saga/testkit'
import type { DatabaseDefinition, DisconnectableClient } from '../database-plugin.js'
import { runMigrations } from '../migrate.js'

/** A per-run database with a service's migrations applied and its Prisma client on it. */
export interface ServiceTestDatabase<Client> extends TestDatabase {
  prisma: Client
}

/**
 * Creates `<prefix>_<random>` (testkit's `createMigratedDatabase`), applies `database.migrationsDir`
 * with the runner the services use at start (`runMigrations`) and opens `database.createClient` on its
 * pool; `drop()` disconnects the client, then drops the database.
 * @throws MigrationError when a migration fails (the database is dropped first)
 */
export async function createServiceTestDatabase<Client extends DisconnectableClient>(
  database: DatabaseDefinition<Client>,
  prefix: string,
): Promise<ServiceTestDatabase<Client>> {
  const db = await createMigratedDatabase({
    prefix,
    migrate: (pool) => runMigrations({ pool, migrationsDir: database.migrationsDir }),
    client: database.createClient,
  })
  return { ...db, prisma: db.client }
}

/**
 * `createServiceTestDatabase` as a fixture of the enclosing `describe` (or file), dropped after its
 * tests (testkit's `useFixture`): returns a stand-in that reads the created database's properties,
 * e.g. `const db = useServiceTestDatabase(database, 'inventory_cancel')`, then `db.prisma` in a test.
 */
export function useServiceTestDatabase<Client extends DisconnectableClient>(
  database: DatabaseDefinition<Client>,
  prefix: string,
): ServiceTestDatabase<Client> {
  return useFixture(() => createServiceTestDatabase(database, prefix))
}
