// `npm run bootstrap [-- --prefix e2e_x_] [-- --drop]`: create (or drop) the four databases and roles.
import { parseArgs } from 'node:util'
import { bootstrapDatabases, DEFAULT_POSTGRES_URL, dropDatabases } from './bootstrap.js'
import { passwordsFromEnv } from './start-env.js'
import { exitOnBadUrlSettings } from './url-settings.js'

const usage = `Usage: npm run bootstrap -- [--prefix <p>] [--drop]

Creates the four service databases and their roles (idempotent), or with --drop removes them.
  --prefix <p>   name them <p>order_service, <p>payment_service, ... (default: no prefix)
  --drop         drop the databases and roles instead of creating them
  --help         print this
POSTGRES_URL names an admin connection (default ${DEFAULT_POSTGRES_URL}).`

let values: { prefix: string; drop: boolean; help: boolean }
try {
  ;({ values } = parseArgs({
    options: {
      prefix: { type: 'string', default: '' },
      drop: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }))
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`)
  process.exit(2)
}
if (values.help) {
  console.log(usage)
  process.exit(0)
}
exitOnBadUrlSettings()
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const opts = { postgresUrl, prefix: values.prefix, passwords: passwordsFromEnv(process.env) }
if (values.drop) {
  await dropDatabases(opts)
  console.log(`dropped the ${values.prefix || '(unprefixed)'} service databases and roles`)
} else {
  for (const db of await bootstrapDatabases(opts)) console.log(`${db.database}: ready (role ${db.role})`)
}
