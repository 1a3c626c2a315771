import { defineConfig } from 'prisma/config'

// `prisma generate` needs no database; `prisma migrate status` reads DATABASE_URL (default: the local one).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url:
      process.env.DATABASE_URL ??
      'postgresql://shipment_service:shipment_service@127.0.0.1:5432/shipment_service',
  },
})
