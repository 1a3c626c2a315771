import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createRunDatabases, dropRunDatabases, RunDatabases } from './databases.js'
import { baseEnv, databaseUrl, infra, runNames, SERVICES, type RunNames, type ServiceName } from './run.js'
import { repoRoot, ServiceProcess } from './service-process.js'
import { deleteBrokerObjects, freePort, tapQueue, TcpProxy, type TapQueue } from '@saga/testkit'

/** How to start a fleet for one scenario. */
export interface FleetOptions {
  /** Instances per service (default 1 each). */
  instances?: Partial<Record<ServiceName, number>>
  /** Extra env per service (e.g. `{ shipment: { CARRIER_ACCOUNT: '' } }`). */
  env?: Partial<Record<ServiceName, Record<string, string>>>
  /**
   * The run's admin token: ADMIN_TOKEN of every service, of the console and of the order CLI (admin
   * writes need it as a bearer). Default: a random one per run.
   */
  adminToken?: string
  /**
   * The checkout each service's instances run from (default: this repository): a release built by
   * `releaseBuild`, to run an older build of some services beside this one.
   */
  root?: Partial<Record<ServiceName, string>>
}

/**
 * Environment every e2e service gets. Retention is an hour so every published outbox row is still
 * there when the invariant checker compares the outbox with what the tap saw; the poll interval is
 * the safety net only (the relay is woken on commit).
 */
const COMMON_ENV = {
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  MIGRATE_ON_START: 'true',
  OUTBOX_RETENTION_MS: '3600000',
  OUTBOX_POLL_INTERVAL_MS: '500',
  CONSUMER_MAX_ATTEMPTS: '10',
}

/**
 * One e2e run: four (or more) service processes with their own databases and broker names, the
 * services' AMQP going through a proxy the test controls, and a raw tap on the run's exchange.
 * `stop()` tears everything down and is safe to call after a partial start.
 */
export class Fleet {
  readonly instances: ServiceProcess[] = []
  /** The saga console, once `startConsole` ran. */
  console: ServiceProcess<'console'> | undefined
  /** See `FleetOptions.adminToken`. */
  adminToken = `e2e-${randomUUID()}`
  readonly logDir: string
  dbs: RunDatabases | undefined
  tap: TapQueue | undefined
  private databasesCreated = false

  /** The services' way to the broker; `cut()` / `restore()` it to simulate an outage. */
  proxy: TcpProxy | undefined

  private constructor(readonly names: RunNames) {
    this.logDir = path.join(repoRoot, 'e2e', '.runs', names.id)
  }

  /** Starts everything and waits until every instance answers /health/ready. */
  static async start(options: FleetOptions = {}): Promise<Fleet> {
    const names = runNames()
    const broker = new URL(infra.amqpUrl)
    const fleet = new Fleet(names)
    if (options.adminToken) fleet.adminToken = options.adminToken
    try {
      fs.mkdirSync(fleet.logDir, { recursive: true })
      fleet.proxy = await TcpProxy.start(broker.hostname, Number(broker.port || 5672))
      await createRunDatabases(names)
      fleet.databasesCreated = true
      fleet.dbs = new RunDatabases(names)
      fleet.tap = await tapQueue(infra.amqpUrl, names.exchange)
      // First instance of each service in parallel (own databases); extra instances after, so two
      // instances never race on the migrations of one database.
      for (const service of SERVICES)
        await fleet.add(service, options.env?.[service], options.root?.[service])
      await Promise.all(fleet.instances.map((p) => p.waitReady(120_000)))
      const extra: ServiceProcess[] = []
      for (const service of SERVICES) {
        for (let i = 1; i < (options.instances?.[service] ?? 1); i++) {
          extra.push(await fleet.add(service, options.env?.[service], options.root?.[service]))
        }
      }
      await Promise.all(extra.map((p) => p.waitReady(120_000)))
      return fleet
    } catch (error) {
      await fleet.stop()
      throw error
    }
  }

  /**
   * Starts one more instance of `service` (named `<service>#<n>`, its log `<service>-<n>.log`) on
   * the run's databases and broker names, with `env` over the common env, from the build under
   * `root` (default: this repository). Does not wait for readiness (`waitReady`).
   */
  async add(service: ServiceName, env: Record<string, string> = {}, root?: string): Promise<ServiceProcess> {
    const n = this.instances.filter((p) => p.service === service).length + 1
    const port = await freePort()
    const name = `${service}#${n}`
    const proc = new ServiceProcess(
      service,
      name,
      port,
      {
        ...baseEnv(),
        ...COMMON_ENV,
        PORT: String(port),
        DATABASE_URL: databaseUrl(this.names.database[service]),
        AMQP_URL: this.proxiedAmqpUrl(),
        AMQP_EXCHANGE: this.names.exchange,
        AMQP_QUEUE_PREFIX: this.names.queuePrefix[service],
        ADMIN_TOKEN: this.adminToken,
        ...env,
      },
      path.join(this.logDir, `${service}-${n}.log`),
      root,
    )
    this.instances.push(proc)
    proc.start()
    return proc
  }

  /**
   * Starts the saga console (services/console) reading the first instance of each service, with the
   * fleet's admin token, polling every 500 ms; waits until it is ready.
   */
  async startConsole(env: Record<string, string> = {}): Promise<ServiceProcess<'console'>> {
    if (this.console) throw new Error('the console is already started')
    const port = await freePort()
    const urls = Object.fromEntries(SERVICES.map((s) => [`${s.toUpperCase()}_URL`, this.one(s).url]))
    this.console = new ServiceProcess(
      'console',
      'console',
      port,
      {
        ...baseEnv(),
        HOST: '127.0.0.1',
        LOG_LEVEL: COMMON_ENV.LOG_LEVEL,
        CONSOLE_PORT: String(port),
        CONSOLE_POLL_MS: '500',
        ...urls,
        ADMIN_TOKEN: this.adminToken,
        ...env,
      },
      path.join(this.logDir, 'console.log'),
    )
    this.console.start()
    await this.console.waitReady(60_000)
    return this.console
  }

  /** The broker URL through the fault proxy. */
  proxiedAmqpUrl(): string {
    if (!this.proxy) throw new Error('the proxy is not started')
    return this.proxy.url(infra.amqpUrl)
  }

  /** Instances of one service. */
  of(service: ServiceName): ServiceProcess[] {
    return this.instances.filter((p) => p.service === service)
  }

  /** The first instance of a service. */
  one(service: ServiceName): ServiceProcess {
    const proc = this.of(service)[0]
    if (!proc) throw new Error(`no ${service} instance`)
    return proc
  }

  /** Env for the order CLI pointed at this run (see packages/fleet/src/cli/). */
  cliEnv(): Record<string, string> {
    const env: Record<string, string> = {
      ...baseEnv(),
      ORDER_SERVICE_URL: this.one('order').url,
      AMQP_URL: infra.amqpUrl,
      AMQP_EXCHANGE: this.names.exchange,
      ADMIN_TOKEN: this.adminToken,
    }
    for (const s of SERVICES) {
      // `where` probes the /health/live of the service an order waits for.
      const instance = this.of(s)[0]
      if (instance) env[`${s.toUpperCase()}_SERVICE_URL`] = instance.url
      env[`${s.toUpperCase()}_DATABASE_URL`] = databaseUrl(this.names.database[s])
      env[`${s.toUpperCase()}_QUEUE_PREFIX`] = this.names.queuePrefix[s]
    }
    return env
  }

  /** Stops every process, closes the tap and proxy, drops databases, deletes queues and exchange. */
  async stop(): Promise<void> {
    const errors: unknown[] = []
    const attempt = async (f: () => Promise<unknown>): Promise<void> => {
      try {
        await f()
      } catch (error) {
        errors.push(error)
      }
    }
    await attempt(async () => this.console?.stop(5_000))
    await Promise.all(this.instances.map((p) => attempt(() => p.stop(5_000))))
    await attempt(async () => this.tap?.delete())
    await attempt(async () => this.proxy?.close())
    await attempt(async () => this.dbs?.close())
    if (this.databasesCreated) await attempt(() => dropRunDatabases(this.names))
    await attempt(() =>
      deleteBrokerObjects({ prefix: `${this.names.id}.`, exchanges: [this.names.exchange] }, infra.amqpUrl),
    )
    if (errors.length > 0)
      process.stderr.write(`[e2e] teardown of ${this.names.id}: ${errors.map(String).join('; ')}\n`)
  }
}
