// `npm run bootstrap [-- --prefix e2e_x_] [-- --drop]`: create the four databases and roles, or drop
// them together with what `npm start` made on the broker (queues, exchange, users).
import { parseOptions } from '@saga/cli-kit'
import { bootstrapDatabases, DEFAULT_AMQP_URL, DEFAULT_POSTGRES_URL, dropDatabases } from './bootstrap.js'
import { brokerUsers, dropBrokerObjects } from './broker-users.js'
import { bootstrapProgram } from './fleet-cli.js'
import { fleetBrokerNames, passwordsFromEnv } from './start-env.js'
import { exitOnBadUrlSettings } from './url-settings.js'

const options = await parseOptions(bootstrapProgram())
exitOnBadUrlSettings()
const prefix = options.prefix ?? ''
const drop = options.drop === true
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const amqpUrl = process.env.AMQP_URL ?? DEFAULT_AMQP_URL
const opts = { postgresUrl, prefix, passwords: passwordsFromEnv(process.env) }
const fleet = prefix || '(unprefixed)'
try {
  if (drop) {
    await dropDatabases(opts)
    console.log(`dropped the ${fleet} service databases and roles`)
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

if (drop) {
  const names = fleetBrokerNames(prefix, process.env)
  try {
    const dropped = await dropBrokerObjects(names, brokerUsers({ userPrefix: prefix }), amqpUrl)
    console.log(
      `deleted the ${fleet} fleet's ${dropped.queues.length} queues, exchange ${dropped.exchange} ` +
        `and broker users ${dropped.users.join(', ') || '(none left)'}`,
    )
  } catch (error) {
    console.error(
      `Cannot delete the ${fleet} fleet's queues, exchange ${names.exchange} and broker users through ` +
        `${new URL(amqpUrl).host}: ${error instanceof Error ? error.message : String(error)}\n` +
        'Run it as a user that may run rabbitmqctl (RABBITMQCTL names another command).',
    )
    process.exitCode = 1
  }
}
