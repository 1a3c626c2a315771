/**
 * The floor (`npm run load -- --floor`): the broker and database work a confirmed saga cannot do
 * without, done by plain `pg` and `amqplib` in this one process, with no framework, no HTTP and no
 * services, so its CPU per saga is a lower bound for the fleet's on the same machine. What the
 * fleet spends above it is what code could still save; what the floor spends is the price of the
 * guarantees themselves (a durable commit per step, quorum queues, publisher confirms).
 *
 * Per saga, from the saga map's confirmed walk (`@saga/contracts`):
 * - placing: one statement, one commit (the step's row and its outbox row, a data-modifying CTE);
 * - each handler of the walk: one statement, one commit (inbox row, the step's row, the outbox row
 *   of the fact it emits, gated on the inbox insert), then the ack;
 * - each fact: one persistent, mandatory publish on a confirm channel; the confirmed rows are
 *   marked published every 100 ms, many per statement, without a WAL flush of their own;
 * - each recorder (the order timeline): deliveries gathered for 100 ms, one INSERT, one ack.
 * Every queue is a quorum queue with the fleet's prefetch (40). The tables carry only the indexes
 * those statements need; the fleet's carry more (that is part of what it spends above the floor).
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { firstFact, sagaFacts, sagaMap, terminalFacts } from '@saga/contracts'
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib'
import pg from 'pg'
import { createServerCpu, machineCpuSeconds } from './cpu.js'
import { orderBody } from './orders.js'
import { fmt, percentile, sorted } from './stats.js'

/** Where the floor runs; it creates its own database, exchange and queues and removes them after. */
export interface FloorSettings {
  rate: number
  seconds: number
  /** Admin PostgreSQL URL (CREATE DATABASE; pg_stat_activity for its backends' CPU). */
  postgresUrl: string
  amqpUrl: string
  /** Longest wait after the last placement for every saga and record to finish, ms. */
  drainTimeoutMs: number
}

/** One run of the floor: what it did and what it cost. CPU in ms per completed saga. */
export interface FloorResult {
  /** Its database's, exchange's and queues' prefix (`floor_<pid>_<time>`); all removed when it ends. */
  name: string
  rate: number
  seconds: number
  sagas: number
  completedPerSecond: number
  /** Placing to the terminal step's commit, ms. */
  terminalMs: { p50: number; p99: number }
  cpuMsPerSaga: { process: number; postgres: number; rabbitmq: number; total: number }
  machineBusy: number | undefined
  perSaga: { commits: number; publishes: number; deliveries: number; recorderBatchSize: number }
}

/** A queue of the confirmed walk: a handler (emits one fact) or a service's recorder. */
interface FloorQueue {
  name: string
  handler: string
  routingKeys: string[]
  /** The fact a handler emits on success; undefined for a recorder. */
  emits: string | undefined
}

/** The confirmed walk's queues, derived from the saga map (the same bindings the fleet declares). */
export function floorQueues(prefix: string): FloorQueue[] {
  const walk = new Set(sagaFacts())
  const queues = new Map<string, FloorQueue>()
  for (const reaction of sagaMap) {
    const routingKey = reaction.reactsTo.routingKey
    if (!walk.has(routingKey) || reaction.undoIfAny === true) continue
    const handler = `${reaction.service}.${reaction.handler}`
    const emits = reaction.recorder === true ? undefined : reaction.mayEmit[0]?.routingKey
    if (reaction.recorder !== true && emits === undefined)
      throw new Error(`floor: ${handler} handles ${routingKey} on the confirmed walk but emits nothing`)
    const queue = queues.get(handler) ?? { name: `${prefix}.${handler}`, handler, routingKeys: [], emits }
    queue.routingKeys.push(routingKey)
    queues.set(handler, queue)
  }
  return [...queues.values()]
}

const SCHEMA = `
  CREATE TABLE outbox (id uuid PRIMARY KEY, routing_key text NOT NULL, payload jsonb NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(), published_at timestamptz);
  CREATE INDEX outbox_pending ON outbox (occurred_at) WHERE published_at IS NULL;
  CREATE TABLE inbox (message_id uuid NOT NULL, handler text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (message_id, handler));
  CREATE TABLE step (order_id uuid NOT NULL, step text NOT NULL, data jsonb NOT NULL,
    PRIMARY KEY (order_id, step));
  CREATE TABLE timeline (message_id uuid PRIMARY KEY, order_id uuid NOT NULL, type text NOT NULL,
    data jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now());`

const PLACE = {
  name: 'floor.place',
  text: `WITH placed AS (INSERT INTO step (order_id, step, data) VALUES ($1, 'place', $2) RETURNING 1)
    INSERT INTO outbox (id, routing_key, payload) SELECT $3, $4, $2 FROM placed`,
}
const HANDLE = {
  name: 'floor.handle',
  text: `WITH fresh AS (INSERT INTO inbox (message_id, handler) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1),
      done AS (INSERT INTO step (order_id, step, data) SELECT $3, $2, $4 FROM fresh RETURNING 1)
    INSERT INTO outbox (id, routing_key, payload) SELECT $5, $6, $4 FROM done`,
}
const RECORD = {
  name: 'floor.record',
  text: `INSERT INTO timeline (message_id, order_id, type, data)
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) ON CONFLICT DO NOTHING`,
}
const MARK = {
  name: 'floor.mark',
  text: 'UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])',
}

const WINDOW_MS = 100
const PREFETCH = 40
const POOL_SIZE = 10

/** The wire body of one fact: the order it is about and the order's data, carried along the chain. */
interface Fact {
  id: string
  orderId: string
  data: Record<string, unknown>
}

/** One floor run's live state: its connections, the sagas in flight and the counts it checks at the end. */
class Floor {
  readonly #names: { database: string; exchange: string }
  readonly #queues: FloorQueue[]
  /** Facts a saga leaves for the recorders: its recorders' routing keys. */
  readonly #recordsPerSaga: number
  readonly #terminal = new Set(terminalFacts.map((fact) => fact.routingKey))
  #pool!: pg.Pool
  #marks!: pg.Pool
  #amqp!: ChannelModel
  #publisher!: ConfirmChannel
  readonly #placedAt = new Map<string, number>()
  readonly #terminalMs: number[] = []
  readonly #confirmed: string[] = []
  #marking: Promise<void> = Promise.resolve()
  #marksTimer: NodeJS.Timeout | undefined
  #closing = false
  readonly counts = { commits: 0, publishes: 0, deliveries: 0, recorded: 0, batches: 0, failures: 0 }
  #firstFailure: Error | undefined

  constructor(readonly settings: FloorSettings) {
    const id = `floor_${process.pid}_${Date.now().toString(36)}`
    this.#names = { database: id, exchange: id }
    this.#queues = floorQueues(id)
    this.#recordsPerSaga = this.#queues
      .filter((queue) => queue.emits === undefined)
      .reduce((n, queue) => n + queue.routingKeys.length, 0)
  }

  /** The database's name, which is also the exchange's and the queues' prefix. */
  get name(): string {
    return this.#names.database
  }

  /** Creates the database, the exchange and the queues, and starts the consumers. */
  async open(): Promise<void> {
    const admin = new pg.Client({ connectionString: this.settings.postgresUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${this.#names.database}`).finally(() => admin.end())
    const url = new URL(this.settings.postgresUrl)
    url.pathname = `/${this.#names.database}`
    this.#pool = new pg.Pool({ connectionString: url.href, max: POOL_SIZE })
    this.#marks = new pg.Pool({ connectionString: url.href, max: 1, options: '-c synchronous_commit=off' })
    // An idle client whose session ends (the DROP DATABASE at close can reach one that is still
    // closing) is an 'error' on its pool; unheard, it would end the process.
    for (const pool of [this.#pool, this.#marks])
      pool.on('error', (error) => {
        if (!this.#closing) this.#fail(error)
      })
    await this.#pool.query(SCHEMA)
    // As the fleet's connections: without TCP_NODELAY every small frame waits for the peer's delayed ACK.
    this.#amqp = await amqp.connect(this.settings.amqpUrl, { noDelay: true })
    this.#publisher = await this.#amqp.createConfirmChannel()
    this.#publisher.on('return', (message: ConsumeMessage) =>
      this.#fail(new Error(`floor: ${message.fields.routingKey} was unroutable`)),
    )
    await this.#publisher.assertExchange(this.#names.exchange, 'topic', { durable: true })
    for (const queue of this.#queues) await this.#consume(queue)
    this.#marksTimer = setInterval(() => this.#flushMarks(), WINDOW_MS)
  }

  /** Places one saga: its first step and its first fact's outbox row in one commit, then the publish. */
  async place(n: number): Promise<void> {
    const orderId = randomUUID()
    const fact: Fact = { id: randomUUID(), orderId, data: { orderId, ...orderBody(n) } }
    this.#placedAt.set(orderId, performance.now())
    await this.#pool.query({ ...PLACE, values: [orderId, fact.data, fact.id, firstFact.routingKey] })
    this.counts.commits++
    this.#publish(firstFact.routingKey, fact)
  }

  #publish(routingKey: string, fact: Fact): void {
    this.counts.publishes++
    const content = Buffer.from(JSON.stringify(fact))
    const options = { persistent: true, mandatory: true, messageId: fact.id, contentType: 'application/json' }
    this.#publisher.publish(this.#names.exchange, routingKey, content, options, (error) => {
      if (error) this.#fail(new Error(`floor: ${routingKey} was nacked`))
      else this.#confirmed.push(fact.id)
    })
  }

  async #consume(queue: FloorQueue): Promise<void> {
    const channel = await this.#amqp.createChannel()
    await channel.assertQueue(queue.name, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
    for (const key of queue.routingKeys) await channel.bindQueue(queue.name, this.#names.exchange, key)
    await channel.prefetch(PREFETCH)
    if (queue.emits === undefined) {
      // One batch at a time per queue, so a batch's multiple ack covers only deliveries it wrote.
      const buffer: ConsumeMessage[] = []
      let writing = Promise.resolve()
      await channel.consume(queue.name, (message) => {
        if (!message) return
        this.counts.deliveries++
        if (buffer.push(message) > 1) return
        setTimeout(() => {
          const batch = buffer.splice(0)
          writing = writing
            .then(() => this.#record(channel, batch))
            .catch((error: Error) => this.#fail(error))
        }, WINDOW_MS)
      })
    } else {
      const emits = queue.emits
      await channel.consume(queue.name, (message) => {
        if (!message) return
        this.counts.deliveries++
        this.#handle(channel, queue.handler, emits, message).catch((error: Error) => this.#fail(error))
      })
    }
  }

  async #handle(channel: Channel, handler: string, emits: string, message: ConsumeMessage): Promise<void> {
    const fact = JSON.parse(message.content.toString()) as Fact
    const next: Fact = { id: randomUUID(), orderId: fact.orderId, data: fact.data }
    const { rowCount } = await this.#pool.query({
      ...HANDLE,
      values: [fact.id, handler, fact.orderId, fact.data, next.id, emits],
    })
    this.counts.commits++
    channel.ack(message)
    if (rowCount !== 1) return
    this.#publish(emits, next)
    if (!this.#terminal.has(emits)) return
    const placedAt = this.#placedAt.get(fact.orderId)
    if (placedAt !== undefined) this.#terminalMs.push(performance.now() - placedAt)
  }

  /** Writes what the recorder gathered in one INSERT and acks it all with one ack. */
  async #record(channel: Channel, batch: ConsumeMessage[]): Promise<void> {
    const facts = batch.map((message) => JSON.parse(message.content.toString()) as Fact)
    const values = [
      facts.map((f) => f.id),
      facts.map((f) => f.orderId),
      batch.map((message) => message.fields.routingKey),
      facts.map((f) => JSON.stringify(f.data)),
    ]
    await this.#pool.query({ ...RECORD, values })
    this.counts.commits++
    this.counts.batches++
    this.counts.recorded += batch.length
    channel.ack(batch.at(-1)!, true)
  }

  #flushMarks(): void {
    if (this.#confirmed.length === 0) return
    const ids = this.#confirmed.splice(0)
    this.#marking = this.#marking
      .then(() => this.#marks.query({ ...MARK, values: [ids] }))
      .then(
        () => undefined,
        (error: Error) => this.#fail(error),
      )
  }

  #fail(error: Error): void {
    this.counts.failures++
    this.#firstFailure ??= error
  }

  /** Throws the first failure of the run, if any (a nack, an unroutable fact, a database error). */
  checkFailures(): void {
    if (this.#firstFailure) throw this.#firstFailure
  }

  /** The terminal steps so far: place → commit of the step that emits the terminal fact, ms each. */
  get terminalMs(): readonly number[] {
    return this.#terminalMs
  }

  /** Whether every placed saga reached its terminal step and every fact was recorded and marked. */
  async settled(sagas: number): Promise<boolean> {
    if (this.#terminalMs.length < sagas || this.counts.recorded < this.#recordsPerSaga * sagas) return false
    this.#flushMarks()
    await this.#marking
    const { rows } = await this.#pool.query<{ pending: number }>(
      'SELECT count(*)::int AS pending FROM outbox WHERE published_at IS NULL',
    )
    return rows[0]?.pending === 0
  }

  /** Closes everything and deletes the queues, the exchange and the database. */
  async close(): Promise<void> {
    this.#closing = true
    clearInterval(this.#marksTimer)
    await this.#marking
    if (this.#amqp) {
      const cleanup = await this.#amqp.createChannel()
      for (const queue of this.#queues) await cleanup.deleteQueue(queue.name)
      await cleanup.deleteExchange(this.#names.exchange)
      await this.#amqp.close()
    }
    await this.#pool?.end()
    await this.#marks?.end()
    const admin = new pg.Client({ connectionString: this.settings.postgresUrl })
    await admin.connect()
    await admin
      .query(`DROP DATABASE IF EXISTS ${this.#names.database} WITH (FORCE)`)
      .finally(() => admin.end())
  }
}

/**
 * Runs the floor at `settings.rate` sagas/s for `settings.seconds` s and measures CPU from the first
 * placement until every saga is terminal, every fact recorded and every outbox row marked.
 * @throws when a publish is nacked or returned, a statement fails, or the run does not settle within
 * `drainTimeoutMs` (the figures would not be a saga's)
 */
export async function runFloor(settings: FloorSettings): Promise<FloorResult> {
  const floor = new Floor(settings)
  const serverCpu = createServerCpu(settings.postgresUrl, [floor.name])
  try {
    await floor.open()
    const servers = await serverCpu.sample()
    const machine = await machineCpuSeconds()
    const own = process.cpuUsage()
    const startedAt = performance.now()
    const total = Math.round(settings.rate * settings.seconds)
    const placing: Promise<void>[] = []
    let sampledAt = startedAt
    for (let n = 0; n < total; n++) {
      const dueAt = startedAt + (n * 1_000) / settings.rate
      const wait = dueAt - performance.now()
      if (wait > 1) await sleep(wait)
      // Sampled while placing too, so a backend that ends during the run still counts.
      if (performance.now() - sampledAt >= 1_000) {
        sampledAt = performance.now()
        void serverCpu.sample()
      }
      placing.push(floor.place(n))
    }
    await Promise.all(placing)
    const deadline = performance.now() + settings.drainTimeoutMs
    while (!(await floor.settled(total))) {
      floor.checkFailures()
      if (performance.now() > deadline)
        throw new Error(`floor: ${total - floor.terminalMs.length} of ${total} sagas not settled in time`)
      await sleep(50)
    }
    floor.checkFailures()
    const elapsedS = (performance.now() - startedAt) / 1_000
    const cpu = process.cpuUsage(own)
    const serversAfter = await serverCpu.sample()
    const machineAfter = await machineCpuSeconds()
    const ms = (seconds: number | undefined) => ((seconds ?? Number.NaN) * 1_000) / total
    const processMs = (cpu.user + cpu.system) / 1_000 / total
    const postgres = ms((serversAfter.postgres ?? Number.NaN) - (servers.postgres ?? Number.NaN))
    const rabbitmq = ms((serversAfter.rabbitmq ?? Number.NaN) - (servers.rabbitmq ?? Number.NaN))
    const terminal = sorted(floor.terminalMs)
    const { commits, publishes, deliveries, recorded, batches } = floor.counts
    return {
      name: floor.name,
      rate: settings.rate,
      seconds: settings.seconds,
      sagas: total,
      completedPerSecond: total / elapsedS,
      terminalMs: { p50: percentile(terminal, 50), p99: percentile(terminal, 99) },
      cpuMsPerSaga: { process: processMs, postgres, rabbitmq, total: processMs + postgres + rabbitmq },
      machineBusy:
        machine && machineAfter
          ? (machineAfter.busy - machine.busy) / (machineAfter.total - machine.total)
          : undefined,
      perSaga: {
        commits: commits / total,
        publishes: publishes / total,
        deliveries: deliveries / total,
        recorderBatchSize: batches > 0 ? recorded / batches : Number.NaN,
      },
    }
  } finally {
    await serverCpu.close()
    await floor.close()
  }
}

/** The floor's report, a few lines. */
export function describeFloor(r: FloorResult): string {
  const c = r.cpuMsPerSaga
  const busy = r.machineBusy === undefined ? 'n/a' : `${fmt(r.machineBusy * 100)} %`
  return [
    `floor: ${fmt(r.sagas)} sagas at ${r.rate}/s for ${r.seconds} s, ${fmt(r.completedPerSecond, 1)} completed/s; ` +
      `place -> terminal step p50 ${fmt(r.terminalMs.p50, 1)} ms, p99 ${fmt(r.terminalMs.p99, 1)} ms`,
    `CPU ms per saga: this process ${fmt(c.process, 1)}, PostgreSQL ${fmt(c.postgres, 1)}, ` +
      `RabbitMQ ${fmt(c.rabbitmq, 1)} = ${fmt(c.total, 1)} (machine busy ${busy})`,
    `per saga: ${fmt(r.perSaga.commits, 2)} commits, ${fmt(r.perSaga.publishes, 2)} publishes, ` +
      `${fmt(r.perSaga.deliveries, 2)} deliveries (recorder batches of ${fmt(r.perSaga.recorderBatchSize, 1)})`,
  ].join('\n')
}
