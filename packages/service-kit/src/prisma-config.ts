import type { ServiceName } from '@saga/contracts'
import { localDatabaseUrl } from './local-database-url.js'

/** The settings of a service's prisma.config.ts, for `defineConfig` of `prisma/config`. */
export interface ServicePrismaConfig {
  /** The schema, relative to the service's folder. */
  schema: string
  /** The migrations folder, relative to the service's folder. */
  migrations: { path: string }
  /** The database `prisma migrate status` reads: DATABASE_URL, else the service's local one. */
  datasource: { url: string }
}

/**
 * A service's Prisma settings: `prisma/schema.prisma`, `prisma/migrations`, and DATABASE_URL or the
 * service's local database (`prisma generate` needs no database). Imports nothing of Prisma, so the
 * service's prisma.config.ts wraps it: `export default defineConfig(servicePrismaConfig('payment'))`.
 */
export function servicePrismaConfig(
  service: ServiceName,
  env: Record<string, string | undefined> = process.env,
): ServicePrismaConfig {
  return {
    schema: 'prisma/schema.prisma',
    migrations: { path: 'prisma/migrations' },
    datasource: { url: env.DATABASE_URL ?? localDatabaseUrl(service) },
  }
}
