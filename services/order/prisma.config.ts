import { servicePrismaConfig } from '@saga/service-kit/prisma-config'
import { defineConfig } from 'prisma/config'

// `prisma generate` needs no database; `prisma migrate status` reads DATABASE_URL (default: the local one).
export default defineConfig(servicePrismaConfig('order'))
