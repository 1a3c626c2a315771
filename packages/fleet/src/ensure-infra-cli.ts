// `npm test` runs this first: PostgreSQL and RabbitMQ answer, or are started, or it says how to get them.
import { DEFAULT_AMQP_URL, DEFAULT_POSTGRES_URL } from './bootstrap.js'
import { ensureInfrastructure } from './ensure-infra.js'
import { exitOnBadUrlSettings } from './url-settings.js'

exitOnBadUrlSettings()

const result = await ensureInfrastructure({
  postgresUrl: process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL,
  amqpUrl: process.env.AMQP_URL ?? DEFAULT_AMQP_URL,
  say: (line) => console.log(`[infra] ${line}`),
})
if (!result.ok) {
  console.error(`Cannot run the tests.\n\n${result.message}`)
  process.exit(1)
}
