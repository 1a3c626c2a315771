// `npm run bootstrap [-- --prefix e2e_x_] [-- --drop]`: create (or drop) the four databases and roles.
import { parseArgs } from 'node:util'
import { bootstrapDatabases, DEFAULT_POSTGRES_URL, dropDatabases } from './bootstrap.js'
import { passwordsFromEnv } from './start-env.js'

const { values } = parseArgs({
  options: { prefix: { type: 'string', default: '' }, drop: { type: 'boolean', default: false } },
})
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const opts = { postgresUrl, prefix: values.prefix, passwords: passwordsFromEnv(process.env) }
if (values.drop) {
  await dropDatabases(opts)
  console.log(`dropped the ${values.prefix || '(unprefixed)'} service databases and roles`)
} else {
  for (const db of await bootstrapDatabases(opts)) console.log(`${db.database}: ready (role ${db.role})`)
}
