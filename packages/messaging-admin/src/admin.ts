import type { ChannelModel } from 'amqplib'
import type pg from 'pg'
import type { MessagingOptions, TransactionClient } from '@saga/messaging'
import {
  createAmqpConnection,
  deadLetterQueueName,
  queueName,
  type AmqpConnection,
} from '@saga/messaging/parts'
import { recentAdminActions, recordAdminAction, type AdminAction } from './actions.js'
import {
  browseQueue,
  concernsAggregate,
  describeDeadLetter,
  republish,
  type DeadLetter,
} from './dead-letters.js'
import {
  findRecords,
  inboxRecords,
  outboxSummary,
  parkedRecords,
  recordsOfAggregate,
  retryParkedRows,
  type InboxRecord,
  type OutboxRecord,
  type OutboxSummary,
  type RecordsSought,
} from './outbox-records.js'
import { BEGIN, COMMIT, NOTIFY_RELAYS, ROLLBACK } from './sql.js'
import { MessagingAdminError } from './admin-error.js'
import { BulkJobs, type BulkJob } from './bulk-jobs.js'
import {
  bulkPreview,
  bulkStart,
  type BulkFilter,
  type BulkKind,
  type BulkPreview,
  type BulkRequest,
} from './bulk.js'
import { skipOrderedKey, stuckKeys, type SkipOutcome, type StuckKey } from './ordered-keys.js'

export { MessagingAdminError }

/** The consumers' default `ordering.gapAfterMs` (@saga/messaging): a held delivery's wait before it is a gap. */
const DEFAULT_GAP_AFTER_MS = 300_000

/** A queue this service consumes: its handler (or recorder) name, the queue and its dead-letter queue. */
export interface AdminQueue {
  handler: string
  queue: string
  deadLetterQueue: string
}

/** The admin's own settings, under `admin` in the options object. */
export interface MessagingAdminSettings {
  /** Longest a read or write waits for the broker before it counts as down, ms. Default 2,000. */
  brokerWaitMs?: number
}

/**
 * Options of `createMessagingAdmin`: the options object of `createMessaging`, so a service builds
 * both from one object. The admin reads `service` (echoed in every answer), `pool` (a pg Pool on a
 * database with the messaging tables and `messaging_admin_action`), `amqpUrl` (it opens a
 * connection of its own, named `<service>-admin`, on first use), `handlers`, `recorders` and
 * `queuePrefix` (the queues it browses and repairs, named as `createMessaging` names them),
 * `relay.wakeup.channel` (the NOTIFY channel that wakes the relays after a parked-row retry,
 * default `outbox`) and `logger`; `admin` holds its own settings. The rest is ignored.
 */
export type MessagingAdminOptions<Tx extends TransactionClient = pg.PoolClient> = MessagingOptions<Tx> & {
  admin?: MessagingAdminSettings
}

/** The answer of `summary()`; the queue counts are null while the broker is down. */
export interface MessagingSummary {
  service: string
  /** ISO 8601, when the summary was taken. */
  at: string
  broker: 'connected' | 'down'
  outbox: OutboxSummary
  queues: Array<AdminQueue & { ready: number | null; consumers: number | null; deadLettered: number | null }>
}

/** One dead-letter queue as browsed: `queue` is the dead-letter queue, `count` all it holds. */
export interface DeadLetterQueueView {
  queue: string
  handler: string
  count: number
  messages: DeadLetter[]
}

/** What a write on messages or rows is asked to do. */
export interface AdminWrite {
  /** Who acts (recorded). */
  actor: string
  /** Only say what would happen: nothing changes, nothing is recorded. */
  dryRun: boolean
  /** The actor's role where the caller has roles (the console's `operator`); recorded in `detail.role`. */
  role?: string | undefined
}

/** The outcome of a write: `actionId` is the recorded action's, null for a dry run. */
export interface AdminWriteResult<R> {
  dryRun: boolean
  actionId: string | null
  results: R[]
}

/** The outcome of one dead letter asked for. */
export type DeadLetterOutcome = 'requeued' | 'would-requeue' | 'discarded' | 'would-discard' | 'not-found'

/** Reads and repairs of one service's messaging; see `createMessagingAdmin`. */
export interface MessagingAdmin {
  readonly service: string
  readonly queues: readonly AdminQueue[]
  /** Outbox counts (one statement) and, per queue, ready/consumers/dead-lettered (one passive declare each). */
  summary(): Promise<MessagingSummary>
  /** Outbox rows of one aggregate, by occurred_at (at most 1,000). */
  records(aggregateId: string): Promise<OutboxRecord[]>
  /**
   * The outbox row of a message id, or the rows of a W3C trace id (32 hex digits), at most 100: what
   * a search by an id from a log line reads (the rows name their aggregate).
   */
  find(sought: RecordsSought): Promise<OutboxRecord[]>
  /** Which handlers consumed `messageIds` (UUIDs), when. */
  inbox(messageIds: readonly string[]): Promise<InboxRecord[]>
  /**
   * Dead letters, browsed without consuming them: at most `limit` per queue, of `queue` only (a
   * handler queue or its dead-letter queue) when given, of `aggregateId` only when given.
   * @throws MessagingAdminError 404 for an unknown queue, 503 when the broker is down
   */
  deadLetters(filter: { queue?: string; aggregateId?: string; limit: number }): Promise<DeadLetterQueueView[]>
  /**
   * Republishes the dead letters `messageIds` of `queue` to the handler's queue (same id and headers,
   * so the inbox deduplicates), each confirmed before its dead letter is acked; records the action.
   * @throws MessagingAdminError 404 for an unknown queue, 503 when the broker is down
   */
  requeue(
    queue: string,
    messageIds: readonly string[],
    write: AdminWrite,
  ): Promise<AdminWriteResult<{ messageId: string; outcome: DeadLetterOutcome }>>
  /** Removes the dead letters `messageIds` of `queue` for good; records the action. Throws as `requeue`. */
  discard(
    queue: string,
    messageIds: readonly string[],
    write: AdminWrite,
  ): Promise<AdminWriteResult<{ messageId: string; outcome: DeadLetterOutcome }>>
  /**
   * Ordered keys that do not move (handlers with `ordering: 'per-key'`): blocked by a dead-lettered
   * message, or with a gap past `consumer.ordering.gapAfterMs` (default 5 min); oldest first, of
   * `handler` only when given. Requeue a blocking message with `requeue` (its `blockedBy` id, from
   * the handler's dead-letter queue): it is then handled in order and the key moves on.
   */
  stuckKeys(filter: { handler?: string; limit: number }): Promise<StuckKey[]>
  /**
   * Skips what holds ordered key (`producer`, `key`) of `handler` back (`skipOrderedKey`): past its
   * dead-lettered message, or over its gap; records the action. The consumers resume the key at
   * their next sweep. @throws MessagingAdminError 404 for a handler this service does not have
   */
  skipOrdered(
    target: { handler: string; producer: string; key: string },
    write: AdminWrite,
  ): Promise<AdminWriteResult<SkipOutcome>>
  /** Parked outbox rows, oldest parked first, of `aggregateId` only when given. */
  parked(filter: { aggregateId?: string; limit: number }): Promise<OutboxRecord[]>
  /** Makes parked rows pending again (attempts 0, available now), records it, then wakes the relays (a NOTIFY). */
  retryParked(
    ids: readonly string[],
    write: AdminWrite,
  ): Promise<AdminWriteResult<{ id: string; outcome: 'retried' | 'would-retry' | 'not-parked' }>>
  /** The newest `limit` recorded admin actions. */
  actions(limit: number): Promise<AdminAction[]>
  /**
   * A bulk action's dry run: how many dead letters (requeue, discard) or parked rows (retry) match
   * `filter`, and the first few. Changes and records nothing.
   * @throws MessagingAdminError 400 (a filter the kind cannot take), 404 (unknown handler), 503 (broker down)
   */
  bulkPreview(kind: BulkKind, filter: BulkFilter): Promise<BulkPreview>
  /**
   * Starts a bulk action in the background: up to `limit` matching items at most `ratePerSecond`,
   * recorded as one action (filter and counts) when it ends. Throws as `bulkPreview`.
   */
  bulkStart(request: BulkRequest): Promise<BulkJob>
  /** A bulk job now (progress, state, its action once ended), or undefined for an unknown id. */
  bulkJob(id: string): BulkJob | undefined
  /** Asks a bulk job to stop after its batch in flight; undefined for an unknown id. */
  bulkStop(id: string): BulkJob | undefined
  /** Closes the admin's broker connection. Idempotent. */
  close(): Promise<void>
}

const RECORDS_LIMIT = 1_000
/** Most rows `find` answers (one trace is one saga: a handful of rows per service). */
const FOUND_LIMIT = 100

/** Runs broker operations one at a time: a browse holds messages unacked, which another would miss. */
function serial(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve()
  return (fn) => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
}

/**
 * Per queue, `[messageCount, consumerCount]` by a passive declare, or undefined for a queue that
 * does not exist (the broker closes the channel then, so the next queue gets a new one).
 */
async function checkQueues(
  connection: ChannelModel,
  names: readonly string[],
): Promise<Array<{ messages: number; consumers: number } | undefined>> {
  const found: Array<{ messages: number; consumers: number } | undefined> = []
  let channel = await connection.createChannel()
  channel.on('error', () => undefined)
  for (const name of names) {
    try {
      const ok = await channel.checkQueue(name)
      found.push({ messages: ok.messageCount, consumers: ok.consumerCount })
    } catch {
      found.push(undefined)
      channel = await connection.createChannel()
      channel.on('error', () => undefined)
    }
  }
  await channel.close().catch(() => undefined)
  return found
}

/** `fallback` for a queue the broker does not have (404, e.g. a handler never started); other errors rethrown. */
const missingQueue =
  <T>(fallback: T) =>
  (error: unknown): T => {
    if ((error as { code?: unknown }).code === 404) return fallback
    throw error
  }

/** What the admin's operations share (internal to the package). */
export interface AdminContext {
  service: string
  pool: pg.Pool
  queues: readonly AdminQueue[]
  /** Wakes the relays of the service's database (a NOTIFY on their wake-up channel). */
  wake: () => Promise<void>
  /** Runs broker operations one at a time. */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>
  /**
   * The open broker connection; with `quick`, no wait once a first connect was tried (a summary
   * while the broker is down answers at once).
   * @throws MessagingAdminError 503 when the broker is unreachable
   */
  broker: (quick?: boolean) => Promise<ChannelModel>
}

/** The queue named `name` (a handler queue or its dead-letter queue). @throws MessagingAdminError 404 */
function queueOf(context: AdminContext, name: string): AdminQueue {
  const found = context.queues.find((q) => q.queue === name || q.deadLetterQueue === name)
  if (found) return found
  const known = context.queues.map((q) => q.deadLetterQueue).join(', ') || 'none'
  throw new MessagingAdminError(
    404,
    `${context.service} consumes no queue '${name}' (its dead-letter queues: ${known})`,
    [{ path: 'body.queue', issue: 'is not a queue of this service' }],
  )
}

/** `MessagingAdmin.summary` (the outbox from the database, the queues from the broker, null when down). */
async function summaryOf(context: AdminContext): Promise<MessagingSummary> {
  const { service, queues } = context
  const outbox = await outboxSummary(context.pool)
  const counts = await context
    .exclusive(async () => {
      const connection = await context.broker(true)
      return checkQueues(
        connection,
        queues.flatMap((q) => [q.queue, q.deadLetterQueue]),
      )
    })
    .catch(() => undefined)
  return {
    service,
    at: new Date().toISOString(),
    broker: counts ? 'connected' : 'down',
    outbox,
    queues: queues.map((q, i) => {
      const main = counts?.[2 * i]
      return {
        ...q,
        ready: main?.messages ?? null,
        consumers: main?.consumers ?? null,
        deadLettered: counts?.[2 * i + 1]?.messages ?? null,
      }
    }),
  }
}

/** `MessagingAdmin.deadLetters`. */
function deadLettersOf(
  context: AdminContext,
  filter: { queue?: string; aggregateId?: string; limit: number },
): Promise<DeadLetterQueueView[]> {
  const chosen = filter.queue === undefined ? context.queues : [queueOf(context, filter.queue)]
  return context.exclusive(async () => {
    const connection = await context.broker()
    const views: DeadLetterQueueView[] = []
    for (const q of chosen) {
      const messages: DeadLetter[] = []
      const count = await browseQueue(connection, q.deadLetterQueue, filter.limit, (message) => {
        const letter = describeDeadLetter(message)
        if (filter.aggregateId === undefined || concernsAggregate(letter, filter.aggregateId))
          messages.push(letter)
        return false
      }).catch(missingQueue(0))
      views.push({ queue: q.deadLetterQueue, handler: q.handler, count, messages })
    }
    return views
  })
}

/**
 * Requeues or discards the dead letters `messageIds` of queue `q` (all copies of each); returns the
 * ids found. A requeue publishes each copy on a confirm channel and acks the dead letter only after
 * the broker confirmed it.
 */
async function moveDeadLetters(
  context: AdminContext,
  kind: 'requeue' | 'discard',
  q: AdminQueue,
  messageIds: readonly string[],
  dryRun: boolean,
): Promise<Set<string>> {
  const wanted = new Set(messageIds)
  const found = new Set<string>()
  await context.exclusive(async () => {
    const connection = await context.broker()
    const confirm = kind === 'requeue' && !dryRun ? await connection.createConfirmChannel() : undefined
    confirm?.on('error', () => undefined)
    try {
      // Passive: a handler queue that is gone would swallow the copies (and the acked originals).
      await confirm?.checkQueue(q.queue).catch((error: unknown) => {
        if ((error as { code?: unknown }).code !== 404) throw error
        throw new MessagingAdminError(409, `the queue '${q.queue}' does not exist: start its consumer first`)
      })
      await browseQueue(connection, q.deadLetterQueue, Number.MAX_SAFE_INTEGER, async (message, channel) => {
        const id = message.properties.messageId as string | undefined
        if (id === undefined || !wanted.has(id)) return false
        found.add(id)
        if (dryRun) return false
        if (confirm) await republish(confirm, q.queue, message)
        channel.ack(message)
        return true
      }).catch(missingQueue(0))
    } finally {
      await confirm?.close().catch(() => undefined)
    }
  })
  return found
}

/** `MessagingAdmin.requeue` and `discard`: moves the dead letters, then records what was done. */
async function deadLetterWrite(
  context: AdminContext,
  kind: 'requeue' | 'discard',
  queue: string,
  messageIds: readonly string[],
  write: AdminWrite,
): Promise<AdminWriteResult<{ messageId: string; outcome: DeadLetterOutcome }>> {
  const q = queueOf(context, queue)
  const found = await moveDeadLetters(context, kind, q, messageIds, write.dryRun)
  const done: DeadLetterOutcome = kind === 'requeue' ? 'requeued' : 'discarded'
  const would: DeadLetterOutcome = kind === 'requeue' ? 'would-requeue' : 'would-discard'
  const results = messageIds.map((messageId) => ({
    messageId,
    outcome: found.has(messageId) ? (write.dryRun ? would : done) : ('not-found' as const),
  }))
  const actionId =
    write.dryRun || found.size === 0
      ? null
      : await recordAdminAction(context.pool, {
          actor: write.actor,
          action: `dead-letters.${kind}`,
          target: q.deadLetterQueue,
          ids: [...found],
          detail: {
            handlerQueue: q.queue,
            asked: messageIds.length,
            [done]: found.size,
            ...(write.role === undefined ? {} : { role: write.role }),
          },
        })
  return { dryRun: write.dryRun, actionId, results }
}

/** `MessagingAdmin.retryParked`: the rows and the record in one transaction, then the relay woken. */
async function retryParkedOf(
  context: AdminContext,
  ids: readonly string[],
  write: AdminWrite,
): Promise<AdminWriteResult<{ id: string; outcome: 'retried' | 'would-retry' | 'not-parked' }>> {
  const client = await context.pool.connect()
  let changed: string[]
  let actionId: string | null = null
  try {
    await client.query(BEGIN)
    changed = await retryParkedRows(client, ids, !write.dryRun)
    if (!write.dryRun && changed.length > 0) {
      actionId = await recordAdminAction(client, {
        actor: write.actor,
        action: 'parked.retry',
        target: 'outbox_message',
        ids: changed,
        detail: {
          asked: ids.length,
          retried: changed.length,
          ...(write.role === undefined ? {} : { role: write.role }),
        },
      })
    }
    await client.query(COMMIT)
  } catch (error) {
    await client.query(ROLLBACK).catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
  if (actionId) await context.wake()
  const found = new Set(changed)
  const results = ids.map((id) => ({
    id,
    outcome: !found.has(id)
      ? ('not-parked' as const)
      : write.dryRun
        ? ('would-retry' as const)
        : ('retried' as const),
  }))
  return { dryRun: write.dryRun, actionId, results }
}

/** The queues `options` consumes, named as `createMessaging` names them: one per handler and recorder. */
function queuesOf(options: MessagingAdminOptions<TransactionClient>): AdminQueue[] {
  const prefix = options.queuePrefix ?? options.service
  return [...(options.handlers ?? []), ...(options.recorders ?? [])].map(({ name }) => {
    const queue = queueName(prefix, name)
    return { handler: name, queue, deadLetterQueue: deadLetterQueueName(queue) }
  })
}

/**
 * A NOTIFY on the relays' wake-up channel (`relay.wakeup.channel`, default `outbox`): every relay
 * on the database (this process's too) looks for due rows now instead of at its next poll. A
 * failed NOTIFY is logged only: the relays' polling finds the rows anyway.
 */
function wakeRelays(options: MessagingAdminOptions<TransactionClient>): () => Promise<void> {
  const channel = options.relay?.wakeup?.channel ?? 'outbox'
  return async () => {
    await options.pool.query(NOTIFY_RELAYS, [channel, `${options.service}-admin`]).catch((error: unknown) => {
      options.logger?.warn({ err: error }, 'messaging admin: the relay wake-up NOTIFY failed; relays poll')
    })
  }
}

/**
 * Creates the admin of one service's messaging from the options object of its `createMessaging`:
 * the reads and repairs behind `messagingAdminPlugin` (`@saga/messaging-admin/fastify`), on the
 * service's pool and a broker connection of its own (opened on first use, closed by `close`, which
 * the caller owns: call it when the service stops). Writes that are not dry runs are recorded with
 * `recordAdminAction`. Example:
 * `const admin = createMessagingAdmin(options)` beside `const messaging = createMessaging(options)`.
 */
export function createMessagingAdmin<Tx extends TransactionClient = pg.PoolClient>(
  options: MessagingAdminOptions<Tx>,
): MessagingAdmin {
  const settings = options as unknown as MessagingAdminOptions<TransactionClient>
  const { service, pool } = options
  const queues = queuesOf(settings)
  const waitMs = options.admin?.brokerWaitMs ?? 2_000
  let amqp: AmqpConnection | undefined
  let closed = false
  const jobs = new BulkJobs()
  const broker = async (quick = false): Promise<ChannelModel> => {
    if (closed) throw new MessagingAdminError(503, 'the messaging admin is closed')
    const tried = amqp !== undefined
    amqp ??= createAmqpConnection({ url: options.amqpUrl, name: `${service}-admin`, logger: options.logger })
    amqp.start()
    try {
      return amqp.current ?? (await amqp.waitForConnection(quick && tried ? 0 : waitMs))
    } catch {
      throw new MessagingAdminError(503, 'the broker is unreachable; retry when it is back')
    }
  }
  const context: AdminContext = {
    service,
    pool,
    queues,
    wake: wakeRelays(settings),
    exclusive: serial(),
    broker,
  }
  return {
    service,
    queues,
    summary: () => summaryOf(context),
    records: (aggregateId) => recordsOfAggregate(pool, aggregateId, RECORDS_LIMIT),
    find: (sought) => findRecords(pool, sought, FOUND_LIMIT),
    inbox: (messageIds) => inboxRecords(pool, messageIds),
    deadLetters: (filter) => deadLettersOf(context, filter),
    requeue: (queue, ids, write) => deadLetterWrite(context, 'requeue', queue, ids, write),
    discard: (queue, ids, write) => deadLetterWrite(context, 'discard', queue, ids, write),
    parked: ({ aggregateId, limit }) => parkedRecords(pool, aggregateId, limit),
    retryParked: (ids, write) => retryParkedOf(context, ids, write),
    stuckKeys: (filter) =>
      stuckKeys(pool, filter, options.consumer?.ordering?.gapAfterMs ?? DEFAULT_GAP_AFTER_MS),
    async skipOrdered(target, write) {
      const queue = queues.find((q) => q.handler === target.handler)
      if (!queue)
        throw new MessagingAdminError(404, `no handler '${target.handler}' in this service`, [
          { path: 'handler', issue: 'unknown handler' },
        ])
      const { actionId, result } = await skipOrderedKey(pool, { ...target, queue: queue.queue }, write)
      return { dryRun: write.dryRun, actionId, results: [result] }
    },
    actions: (limit) => recentAdminActions(pool, limit),
    bulkPreview: (kind, filter) => bulkPreview(context, kind, filter),
    bulkStart: (request) => bulkStart(context, jobs, request),
    bulkJob: (id) => jobs.get(id),
    bulkStop: (id) => jobs.stop(id),
    async close() {
      // The jobs first: each ends its batch and records what it did while the broker is still open.
      await jobs.close()
      closed = true
      await amqp?.close()
    },
  }
}
