import { createCli, InvalidArgumentError, packageVersion } from '@saga/cli-kit'
import { DEFAULT_AMQP_URL, DEFAULT_POSTGRES_URL, databaseName } from './bootstrap.js'
import { SERVICES } from './cli/settings.js'

/**
 * `--prefix <p>`: a prefix every service's database, role and broker name can carry (lower-case
 * letters, digits and `_`; the longest database name within PostgreSQL's 63 characters).
 * @throws InvalidArgumentError naming the rule
 */
export function parsePrefix(value: string): string {
  if (value === '')
    throw new InvalidArgumentError('give a prefix, or leave --prefix out for the unprefixed fleet')
  try {
    for (const service of SERVICES) databaseName(service, value)
  } catch {
    throw new InvalidArgumentError(
      `expected lower-case letters, digits and _ (databases are named ${value}order_service, ...), ` +
        'at most 46 characters',
    )
  }
  return value
}

const PREFIX_HELP =
  'name everything <p>...: databases <p>order_service, ..., exchange <p>saga.events, queues ' +
  '<p>order.*, broker users <p>order-service, ...'

/**
 * `npm start -- [--prefix <p>]`: the command line of start.ts (the convention of @saga/cli-kit).
 */
export function startProgram() {
  return createCli({
    name: 'npm start --',
    description:
      'Check PostgreSQL and RabbitMQ (starting them when installed but stopped), create the four ' +
      'service databases, roles and broker users, and run the four services in this terminal with ' +
      'prefixed output until Ctrl-C. A service that dies is reported and can be restarted with ' +
      'SIGUSR2 (the message names the pid).',
    version: packageVersion(import.meta.url),
  })
    .option('--prefix <p>', `a fleet beside the usual one: ${PREFIX_HELP}; give it other ports`, parsePrefix)
    .addHelpText(
      'after',
      `
Environment (docs/operations.md, "Environment variables", has them all):
  POSTGRES_URL    admin connection (default: ${DEFAULT_POSTGRES_URL})
  AMQP_URL        the broker (default: ${DEFAULT_AMQP_URL})
  ORDER_PORT, PAYMENT_PORT, INVENTORY_PORT, SHIPMENT_PORT   ports (default: 3001-3004)
  CONSOLE_PORT    the saga console's port (default: 3005)
  <SERVICE>_INSTANCES   processes of that service (default: 1)
  every other service variable (LOG_LEVEL, ...) passes through to the four services

Exit codes: 0 every service stopped cleanly; 1 a start-up failure or an unclean stop;
2 usage error.

Example: ORDER_PORT=3101 PAYMENT_PORT=3102 INVENTORY_PORT=3103 SHIPMENT_PORT=3104 npm start -- --prefix p_`,
    )
}

/**
 * `npm run bootstrap -- [--prefix <p>] [--drop]`: the command line of bootstrap-cli.ts.
 */
export function bootstrapProgram() {
  return createCli({
    name: 'npm run bootstrap --',
    description:
      'Create the four service databases and their roles (idempotent: an existing one is kept and ' +
      'its role password set again), or with --drop remove them, and the queues, events exchange ' +
      'and broker users npm start made for the same prefix.',
    version: packageVersion(import.meta.url),
  })
    .option('--prefix <p>', `name them <p>order_service, <p>payment_service, ...`, parsePrefix)
    .option(
      '--drop',
      'drop the databases, roles, queues, exchange and broker users instead of creating them (a stopped fleet only)',
    )
    .addHelpText(
      'after',
      `
Environment:
  POSTGRES_URL   an admin connection that may create databases and roles
                 (default: ${DEFAULT_POSTGRES_URL})
  ORDER_DB_PASSWORD, PAYMENT_DB_PASSWORD, ...   role passwords (default: the role's name)
  AMQP_URL       --drop: the broker, as a user that may delete the exchange
                 (default: ${DEFAULT_AMQP_URL})
  AMQP_EXCHANGE  --drop: the events exchange, when npm start was given one
  RABBITMQCTL    --drop: the rabbitmqctl command (default: rabbitmqctl)

Exit codes: 0 done; 1 failed (the reason on stderr); 2 usage error.`,
    )
}
