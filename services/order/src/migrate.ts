// Applies this service's migrations and exits: each Kubernetes pod runs it first, as its init container.
import { fileURLToPath } from 'node:url'
import { runMigrate } from '@saga/service-kit'
import { loadConfig } from './config.js'

await runMigrate({
  service: 'order-service',
  loadConfig: () => loadConfig(process.env),
  migrationsDir: fileURLToPath(new URL('../prisma/migrations', import.meta.url)),
})
