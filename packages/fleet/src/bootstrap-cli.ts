// `npm run bootstrap [-- --prefix e2e_x_] [-- --drop]`: create the four databases and roles, or drop
// them together with what `npm start` made on the broker (queues, exchange, users).
import { parseOptions } from '@saga/cli-kit'
import {
  bootstrapDatabases,
  databaseSessions,
  DEFAULT_AMQP_URL,
  DEFAULT_POSTGRES_URL,
  dropDatabases,
} from './bootstrap.js'
import { brokerConnections, brokerUsers, dropBrokerObjects } from './broker-users.js'
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

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * What of the fleet is still connected: its services' database sessions and broker connections. A
 * running fleet would declare its queues again as soon as they were deleted and fail on the dropped
 * databases, so `--drop` removes nothing while any is open.
 */
async function stillConnected(): Promise<string[]> {
  const sessions = await databaseSessions(opts)
  const connections = await brokerConnections(brokerUsers({ userPrefix: prefix }))
  return [
    ...sessions.map((s) => `${s.sessions} session(s) on database ${s.database}`),
    ...connections.map((c) => `${c.connections} broker connection(s) as ${c.user}`),
  ]
}

if (drop) {
  const open = await stillConnected().catch((error: unknown) => {
    console.error(`Cannot tell whether the ${fleet} fleet is still running: ${messageOf(error)}`)
    process.exit(1)
  })
  if (open.length > 0) {
    console.error(
      `The ${fleet} fleet is still connected, so nothing was dropped:\n  ${open.join('\n  ')}\n` +
        `Stop it (Ctrl-C in the terminal of npm start${prefix ? ` -- --prefix ${prefix}` : ''}) and close ` +
        'any other session named above (a psql, say), then drop again.',
    )
    process.exit(1)
  }
}

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
      messageOf(error),
  )
  process.exitCode = 1
}

if (drop) {
  const names = fleetBrokerNames(prefix, process.env)
  try {
    const dropped = await dropBrokerObjects(names, brokerUsers({ userPrefix: prefix }), amqpUrl)
    console.log(
      `deleted the ${fleet} fleet's ${dropped.queues.length} queues` +
        (dropped.exchangeKept ? '' : `, exchange ${dropped.exchange}`) +
        ` and broker users ${dropped.users.join(', ') || '(none left)'}`,
    )
    if (dropped.exchangeKept)
      console.log(`kept exchange ${dropped.exchange}: queues of another fleet are still bound to it`)
  } catch (error) {
    console.error(
      `Cannot delete the ${fleet} fleet's queues, exchange ${names.exchange} and broker users through ` +
        `${new URL(amqpUrl).host}: ${messageOf(error)}\n` +
        'Run it as a user that may run rabbitmqctl (RABBITMQCTL names another command).',
    )
    process.exitCode = 1
  }
}
