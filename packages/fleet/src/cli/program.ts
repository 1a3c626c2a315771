import { createCli, Option, packageVersion, parse, repeatable, usageError } from '@saga/cli-kit'
import {
  cancel,
  dlqDiscard,
  dlqList,
  dlqRequeue,
  follow,
  parkedList,
  parkedRetry,
  place,
} from './commands.js'
import { parsePrefix } from '../fleet-cli.js'
import { loadSettings, type CliSettings } from './settings.js'
import { where } from './where.js'

const ENVIRONMENT = `
Environment:
  <SERVICE>_SERVICE_URL    each service's base URL, SERVICE one of ORDER, PAYMENT,
                           INVENTORY, SHIPMENT (default: http://127.0.0.1 and
                           <SERVICE>_PORT, else 3001-3004, as npm start)
  AMQP_URL, AMQP_EXCHANGE  the broker and the events exchange (<prefix>saga.events)
  <SERVICE>_DATABASE_URL   each service's database, for its outbox rows
                           (default: <prefix><service>_service on 127.0.0.1:5432)
  <SERVICE>_QUEUE_PREFIX   each service's queue prefix (default: <prefix><service>)
  RABBITMQ_MANAGEMENT_URL  optional, to list the broker's queues

Exit codes: 0 done; 1 refused or failed (the reason on stderr); 2 usage error;
3 the order was not final within --timeout.`

const TIMEOUT_HELP = 'how long to wait for the final event, ms'

/** The settings for the fleet the program's `--prefix` names (`loadSettings`). */
const settingsOf = (program: Program): CliSettings =>
  loadSettings(process.env, (program.opts() as { prefix?: string }).prefix ?? '')

/** Sets the action's outcome as the process's exit code. */
const exitWith = async (code: Promise<number>): Promise<void> => {
  process.exitCode = await code
}

/**
 * The order CLI, `npm run order -- <command>`: place an order and follow its event chain live, see
 * where an order stands, cancel it, and list or requeue dead-lettered messages and parked outbox
 * rows. Settings come from the environment (`loadSettings`) when a command runs, not for `--help`.
 * Run it with `runCli`.
 */
export function orderProgram() {
  const program = createCli({
    name: 'npm run order --',
    description:
      'Place an order and follow its event chain live, see where an order stands, cancel it, and ' +
      'repair dead-lettered messages and parked outbox rows of a running fleet.',
    version: packageVersion(import.meta.url),
  })
    .usage('[--prefix <p>] <command> [options]')
    .option(
      '--prefix <p>',
      'the fleet npm start -- --prefix <p> runs: its databases, queues and exchange (default: none)',
      parsePrefix,
    )
    .addHelpText('after', ENVIRONMENT)
  addPlace(program)
  addOrderCommands(program)
  addRepairCommands(program)
  return program
}

type Program = ReturnType<typeof createCli>

/** `place`: POST /orders from the command line, optionally followed to its end. */
function addPlace(program: Program): void {
  program
    .command('place')
    .description('place an order (POST /orders); with --follow print its event chain live until it is final')
    .requiredOption('--sku <sku>', 'a line of the order; repeat for more lines', repeatable(String))
    .option(
      '--qty <n>',
      'the quantity of the --sku at the same position (default: 1); repeat',
      repeatable(parse.number),
    )
    .option('--price <minor units>', 'unit price of every line, in minor units', parse.number, 1999)
    .option('--currency <code>', 'ISO 4217 currency', 'EUR')
    .option('--country <code>', 'ISO 3166-1 alpha-2 country of the shipping address', 'DE')
    .option(
      '--payment <token>',
      'payment token: tok_visa, tok_mastercard, tok_amex (captured), tok_slow (captured after a ' +
        'delay: time to cancel), tok_chargeDeclined, tok_insufficientFunds, tok_expiredCard (declined)',
      'tok_visa',
    )
    .option('--follow', 'print the event chain live until the order is final')
    .addOption(new Option('--timeout <ms>', TIMEOUT_HELP).argParser(parse.positiveInteger).default(30_000))
    .addHelpText('after', '\nExample: npm run order -- place --sku MUG-001 --qty 2 --sku CAP-RED --follow')
    .action(async (options, command) => {
      const quantities = options.qty ?? []
      if (quantities.length > options.sku.length) throw usageError(command, 'more --qty than --sku')
      await exitWith(
        place(settingsOf(program), {
          skus: options.sku,
          quantities,
          price: options.price,
          currency: options.currency,
          country: options.country,
          paymentMethod: options.payment,
          follow: options.follow === true,
          timeoutMs: options.timeout,
        }),
      )
    })
}

/** `follow`, `where` and `cancel`: one order, by its id. */
function addOrderCommands(program: Program): void {
  program
    .command('follow')
    .description("print the order's event chain, from the outboxes and then live, until it is final")
    .argument('<orderId>', 'the order', parse.uuid)
    .addOption(new Option('--timeout <ms>', TIMEOUT_HELP).argParser(parse.positiveInteger).default(30_000))
    .action((orderId, options) => exitWith(follow(settingsOf(program), orderId, options.timeout)))

  program
    .command('where')
    .description(
      'where the order stands: status, deadline and time left or the cause of its cancel, its facts ' +
        'in the four outboxes, what it waits for and from whom, its dead letters',
    )
    .argument('<orderId>', 'the order', parse.uuid)
    .action((orderId) => exitWith(where(settingsOf(program), orderId)))

  program
    .command('cancel')
    .description('cancel a PENDING order (POST /orders/:id/cancel)')
    .argument('<orderId>', 'the order', parse.uuid)
    .addHelpText(
      'after',
      '\nAn order that waits long enough to cancel: place --sku MUG-001 --payment tok_slow',
    )
    .action((orderId) => exitWith(cancel(settingsOf(program), orderId)))
}

/** `dlq` and `parked`: what waits for a person, and how to send it on. */
function addRepairCommands(program: Program): void {
  const dlq = program.command('dlq').description("dead-lettered messages of the fleet's handlers")
  dlq
    .command('list')
    .description('every dead-lettered message, by queue, with its order and reason')
    .action(() => exitWith(dlqList(settingsOf(program))))
  dlq
    .command('requeue')
    .description("move a dead-lettered message (or every one, --all) back to its handler's queue")
    .argument('[messageId]', 'the message (dlq list shows the ids)', parse.uuid)
    .option('--all', 'every dead-lettered message')
    .action((messageId, options, command) => {
      if ((options.all === true) === (messageId !== undefined))
        throw usageError(command, 'give a messageId or --all, not both and not neither')
      return exitWith(dlqRequeue(settingsOf(program), messageId))
    })
  dlq
    .command('discard')
    .description('print a dead-lettered message, then remove it from its dead-letter queue')
    .argument('<messageId>', 'the message (dlq list shows the ids)', parse.uuid)
    .action((messageId) => exitWith(dlqDiscard(settingsOf(program), messageId)))

  const parked = program.command('parked').description('outbox rows whose publishing gave up')
  parked
    .command('list')
    .description('the parked rows of the four services, oldest first, with their last error')
    .action(() => exitWith(parkedList(settingsOf(program))))
  parked
    .command('retry')
    .description("make a parked row pending again; its service's relay publishes it at its next poll")
    .argument('<id>', 'the row (parked list shows the ids)', parse.uuid)
    .action((id) => exitWith(parkedRetry(settingsOf(program), id)))
}
