import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import { SERVICES, type ServiceName } from './bootstrap.js'

const run = promisify(execFile)

/**
 * The first segment of the routing keys each service publishes (contracts: one file per producing
 * service; inventory's facts are `stock.*`). The broker's topic permission limits a service's relay
 * to these keys on the events exchange.
 */
export const PUBLISHED_PREFIX: Record<ServiceName, string> = {
  order: 'order',
  payment: 'payment',
  inventory: 'stock',
  shipment: 'shipment',
}

/** RabbitMQ permission regexes of one user in one vhost (https://www.rabbitmq.com/docs/access-control). */
export interface BrokerPermissions {
  configure: string
  write: string
  read: string
}

/** One service's broker user: name, password, vhost permissions and its topic permission on the exchange. */
export interface BrokerUser {
  service: ServiceName
  /** `[userPrefix]<service>-service`, e.g. `order-service`. */
  user: string
  password: string
  permissions: BrokerPermissions
  /** Topic permission on `exchange`: `write` matches the routing keys it may publish. */
  topic: { exchange: string; write: string; read: string }
}

/** Options of `brokerUsers`. */
export interface BrokerUserOptions {
  /** The events exchange (default `saga.events`). */
  exchange?: string | undefined
  /** Queue prefix per service (default the service name), as AMQP_QUEUE_PREFIX sets it. */
  queuePrefixes?: Partial<Record<ServiceName, string>> | undefined
  /** Passwords per service; default the user's own name (local development only). */
  passwords?: Partial<Record<ServiceName, string>> | undefined
  services?: readonly ServiceName[] | undefined
  /** Prepended to every user name, e.g. `t1a2b_` for a test run's own users. Default none. */
  userPrefix?: string | undefined
}

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Least-privilege permissions of one service (the one source for `npm start`, compose's
 * definitions.json and the Kubernetes `Permission`s; a test checks the copies):
 * - configure: its own queues and DLQs (`<prefix>.*`, declared at start) and the events exchange,
 *   which relay and consumer re-declare idempotently on every connect (a declare needs configure);
 * - write: the events exchange (the relay publishes), its own queues (binding them needs write on
 *   the queue) and `amq.default`: declaring a queue with `x-dead-letter-exchange: ''` needs write on
 *   that exchange, and the consumer dead-letters a copy into `<queue>.dlq` through it. This also
 *   lets the user send into any queue by name (docs/deploy.md, "Broker permissions");
 * - read: its own queues (consume) and the events exchange (binding needs read on the exchange).
 * No other service's queue matches, so it can neither consume, purge nor delete one.
 */
export function brokerPermissions(queuePrefix: string, exchange = 'saga.events'): BrokerPermissions {
  const queues = `${escape(queuePrefix)}\\..+`
  const ex = escape(exchange)
  return {
    configure: `^(${ex}|${queues})$`,
    write: `^(${ex}|amq\\.default|${queues})$`,
    read: `^(${ex}|${queues})$`,
  }
}

/** The broker user of each service, without touching the broker. */
export function brokerUsers(opts: BrokerUserOptions = {}): BrokerUser[] {
  const exchange = opts.exchange ?? 'saga.events'
  return (opts.services ?? SERVICES).map((service) => {
    const user = `${opts.userPrefix ?? ''}${service}-service`
    return {
      service,
      user,
      password: opts.passwords?.[service] ?? user,
      permissions: brokerPermissions(opts.queuePrefixes?.[service] ?? service, exchange),
      topic: { exchange, write: `^${escape(PUBLISHED_PREFIX[service])}\\.`, read: '.*' },
    }
  })
}

/** `amqp://<user>:<password>@<host of base>/<vhost of base>`: the base URL with a service's credentials. */
export function amqpUrlFor(user: BrokerUser, baseUrl: string): string {
  const url = new URL(baseUrl)
  url.username = encodeURIComponent(user.user)
  url.password = encodeURIComponent(user.password)
  return url.toString()
}

/** The vhost an AMQP URL names: its path, decoded; `/` when empty (RabbitMQ's default). */
export function vhostOf(amqpUrl: string): string {
  const path = new URL(amqpUrl).pathname
  return path === '' || path === '/' ? '/' : decodeURIComponent(path.slice(1))
}

/** Runs one `rabbitmqctl -q …` command, with `input` on its standard input when given. */
type Rabbitmqctl = (args: string[], input?: string) => Promise<{ stdout: string }>

/**
 * Runs `rabbitmqctl -q …` (RABBITMQCTL may name another command, e.g.
 * `docker compose exec -T rabbitmq rabbitmqctl`) and resolves its output.
 * @throws Error naming the command, with rabbitmqctl's own output, when it fails
 */
function rabbitmqctlRunner(rabbitmqctl: string): Rabbitmqctl {
  const [command, ...prefix] = rabbitmqctl.split(/\s+/).filter(Boolean)
  return async (args, input) => {
    try {
      const child = run(command!, [...prefix, '-q', ...args], { timeout: 30_000 })
      // A command that exits without reading its input closes the pipe (EPIPE): its exit code
      // says what went wrong, so the write's own error is not one more.
      child.child.stdin?.on('error', () => undefined).end(input)
      return await child
    } catch (error) {
      const e = error as { stderr?: string; message: string }
      throw new Error(`${rabbitmqctl} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, {
        cause: error,
      })
    }
  }
}

/** The broker's user names, from `rabbitmqctl list_users`. */
async function existingUsers(ctl: Rabbitmqctl): Promise<Set<string>> {
  const { stdout } = await ctl(['list_users', '--formatter', 'json'])
  return new Set((JSON.parse(stdout || '[]') as Array<{ user: string }>).map((u) => u.user))
}

/**
 * The users, their vhost permissions and their topic permissions as a RabbitMQ definitions document
 * (https://www.rabbitmq.com/docs/definitions), the shape `rabbitmqctl import_definitions` takes.
 */
export function userDefinitions(users: readonly BrokerUser[], vhost: string) {
  return {
    users: users.map((u) => ({ name: u.user, password: u.password, tags: [] as string[] })),
    permissions: users.map((u) => ({ user: u.user, vhost, ...u.permissions })),
    topic_permissions: users.map((u) => ({ user: u.user, vhost, ...u.topic })),
  }
}

/**
 * Creates or updates each user (password, vhost permissions, topic permission) with one
 * `rabbitmqctl import_definitions` (the management API is not assumed): an import adds a user that
 * is missing and overwrites the password and permissions of one that exists, so this is idempotent.
 * The definitions go on the command's standard input, so no password is ever on a command line.
 * `rabbitmqctl` must reach the node (as root, or the user that shares its Erlang cookie);
 * RABBITMQCTL names another command, e.g. `docker compose exec -T rabbitmq rabbitmqctl`.
 * @throws Error with rabbitmqctl's output when the import fails
 */
export async function ensureBrokerUsers(
  users: BrokerUser[],
  vhost: string,
  rabbitmqctl = process.env.RABBITMQCTL ?? 'rabbitmqctl',
): Promise<void> {
  await rabbitmqctlRunner(rabbitmqctl)(['import_definitions'], JSON.stringify(userDefinitions(users, vhost)))
}

/**
 * The broker connections open as `users` (`rabbitmqctl list_connections user`): a running fleet's
 * services. Empty when none is.
 * @returns one entry per user with connections, `{ user, connections }`
 * @throws Error naming the rabbitmqctl command when it fails
 */
export async function brokerConnections(
  users: ReadonlyArray<Pick<BrokerUser, 'user'>>,
  rabbitmqctl = process.env.RABBITMQCTL ?? 'rabbitmqctl',
): Promise<Array<{ user: string; connections: number }>> {
  const { stdout } = await rabbitmqctlRunner(rabbitmqctl)(['list_connections', 'user', '--formatter', 'json'])
  const counts = new Map(users.map((u) => [u.user, 0]))
  for (const { user } of JSON.parse(stdout || '[]') as Array<{ user: string }>) {
    const count = counts.get(user)
    if (count !== undefined) counts.set(user, count + 1)
  }
  return [...counts].filter(([, n]) => n > 0).map(([user, connections]) => ({ user, connections }))
}

/** What `dropBrokerObjects` removed. */
export interface DroppedBrokerObjects {
  queues: string[]
  exchange: string
  /** The exchange was kept: queues of another fleet are still bound to it (a shared AMQP_EXCHANGE). */
  exchangeKept: boolean
  users: string[]
}

/**
 * Removes what `npm start` made on the broker for one fleet: every queue in `amqpUrl`'s vhost whose name
 * starts with a service's queue prefix and a dot (its handlers' queues and their `.dlq`s, e.g.
 * `p_order.record-timeline.dlq`), the events exchange unless other queues are still bound to it (a
 * shared AMQP_EXCHANGE), and the four users. Queues and users are
 * listed and users deleted through `rabbitmqctl`; queues and the exchange are deleted over AMQP as
 * `amqpUrl`'s user (rabbitmqctl 3.x has no command that deletes an exchange). Missing objects are
 * not an error.
 * @param names the fleet's exchange and queue prefixes (`fleetBrokerNames`; unprefixed: `saga.events`, the service names)
 * @throws Error naming the failed rabbitmqctl command or the broker's refusal
 */
export async function dropBrokerObjects(
  names: { exchange: string; queuePrefixes: Record<ServiceName, string> },
  users: ReadonlyArray<Pick<BrokerUser, 'user'>>,
  amqpUrl: string,
  rabbitmqctl = process.env.RABBITMQCTL ?? 'rabbitmqctl',
): Promise<DroppedBrokerObjects> {
  const ctl = rabbitmqctlRunner(rabbitmqctl)
  const vhost = vhostOf(amqpUrl)
  const { stdout } = await ctl(['list_queues', '-p', vhost, '--no-table-headers', 'name'])
  const prefixes = SERVICES.map((s) => `${names.queuePrefixes[s]}.`)
  const queues = stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((name) => prefixes.some((p) => name.startsWith(p)))
  const connection = await amqp.connect(amqpUrl)
  connection.on('error', () => undefined)
  let exchangeKept: boolean
  try {
    const channel = await connection.createChannel()
    for (const queue of queues) await channel.deleteQueue(queue)
    exchangeKept = await deleteUnusedExchange(connection, names.exchange)
  } finally {
    await connection.close().catch(() => undefined)
  }

  const existing = await existingUsers(ctl)
  const deleted = users.map((u) => u.user).filter((user) => existing.has(user))
  for (const user of deleted) await ctl(['delete_user', user])
  return { queues, exchange: names.exchange, exchangeKept, users: deleted }
}

/**
 * Deletes `exchange` unless a queue is still bound to it (`ifUnused`: RabbitMQ refuses with 406 on
 * its own channel, which then closes). Returns whether it was kept.
 */
async function deleteUnusedExchange(connection: amqp.ChannelModel, exchange: string): Promise<boolean> {
  const channel = await connection.createChannel()
  channel.on('error', () => undefined)
  try {
    await channel.deleteExchange(exchange, { ifUnused: true })
    await channel.close()
    return false
  } catch (error) {
    if ((error as { code?: unknown }).code === 406) return true
    throw error
  }
}

/** Removes users `ensureBrokerUsers` made (tests). Missing users are ignored. */
export async function deleteBrokerUsers(
  users: ReadonlyArray<Pick<BrokerUser, 'user'>>,
  rabbitmqctl = 'rabbitmqctl',
): Promise<void> {
  const ctl = rabbitmqctlRunner(rabbitmqctl)
  const existing = await existingUsers(ctl)
  for (const u of users) if (existing.has(u.user)) await ctl(['delete_user', u.user])
}
