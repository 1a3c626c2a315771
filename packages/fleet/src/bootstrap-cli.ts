// `npm run bootstrap [-- --prefix e2e_x_] [-- --drop]`: create (or drop) the four databases and roles.
import { parseOptions } from '@saga/cli-kit'
import { bootstrapDatabases, DEFAULT_POSTGRES_URL, dropDatabases } from './bootstrap.js'
import { bootstrapProgram } from './fleet-cli.js'
import { passwordsFromEnv } from './start-env.js'
import { exitOnBadUrlSettings } from './url-settings.js'

const options = await parseOptions(bootstrapProgram())
exitOnBadUrlSettings()
const prefix = options.prefix ?? ''
const drop = options.drop === true
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const opts = { postgresUrl, prefix, passwords: passwordsFromEnv(process.env) }
try {
  if (drop) {
    await dropDatabases(opts)
    console.log(`dropped the ${prefix || '(unprefixed)'} service databases and roles`)
  } else {
    for (const db of await bootstrapDatabases(opts)) console.log(`${db.database}: ready (role ${db.role})`)
  }
} catch (error) {
  console.error(
    `Cannot ${drop ? 'drop' : 'create'} the service databases through ${new URL(postgresUrl).host}: ` +
      `${error instanceof Error ? error.message : String(error)}`,
  )
  process.exitCode = 1
}
