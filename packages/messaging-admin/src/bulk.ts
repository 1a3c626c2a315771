import type { ChannelModel, ConfirmChannel } from 'amqplib'
import { recordAdminAction } from './actions.js'
import type { AdminContext, AdminQueue } from './admin.js'
import { MessagingAdminError } from './admin-error.js'
import type { BulkBatch, BulkJob, BulkJobs } from './bulk-jobs.js'
import { browseQueue, describeDeadLetter, republish, type DeadLetter } from './dead-letters.js'
import { toRecords, type OutboxRecord } from './outbox-records.js'
import { COUNT_PARKED_MATCHING, PARKED_MATCHING, RETRY_PARKED_MATCHING } from './sql.js'

/**
 * Which dead letters or parked rows a bulk action takes; every part optional, all given must hold.
 * `handler` (dead letters only): the handler whose dead-letter queue. `type`: the message type
 * (`payment.processed.v1`). `reason`: a part of the dead-letter reason or the row's last error,
 * case-insensitive. `since` / `until` (ISO 8601): dead-lettered or parked at or after / before.
 */
export interface BulkFilter {
  handler?: string | undefined
  type?: string | undefined
  reason?: string | undefined
  since?: string | undefined
  until?: string | undefined
}

/** What a bulk action does: requeue or discard dead letters, or retry parked outbox rows. */
export type BulkKind = 'requeue' | 'discard' | 'retry'

/** A bulk action as asked: the filter, most items, most items a second, who acts and as which role. */
export interface BulkRequest {
  kind: BulkKind
  filter: BulkFilter
  limit: number
  ratePerSecond: number
  actor: string
  /** The actor's role where the caller has roles (the console's `operator`); recorded when given. */
  role?: string | undefined
}

/** A dry run's answer: how many match (of how many scanned) and a few of them. */
export interface BulkPreview {
  kind: BulkKind
  filter: BulkFilter
  matched: number
  /** Dead letters looked at (all of the queues' when `complete`); for parked rows the matched count. */
  scanned: number
  /** False when a dead-letter queue held more than `SCAN_LIMIT` messages: `matched` counts the first ones. */
  complete: boolean
  sample: Array<DeadLetter | OutboxRecord>
}

/** Most dead letters a dry run or a batch looks at per queue. */
export const SCAN_LIMIT = 10_000
/** How many matching items a dry run shows. */
const SAMPLE_SIZE = 10

/** Whether dead letter `letter` is one `filter` takes. */
export function letterMatches(letter: DeadLetter, filter: BulkFilter): boolean {
  if (filter.type !== undefined && letter.type !== filter.type) return false
  if (
    filter.reason !== undefined &&
    !(letter.reason ?? '').toLowerCase().includes(filter.reason.toLowerCase())
  )
    return false
  if (filter.since === undefined && filter.until === undefined) return true
  const at = letter.deadLetteredAt === null ? Number.NaN : Date.parse(letter.deadLetteredAt)
  if (Number.isNaN(at)) return false
  if (filter.since !== undefined && at < Date.parse(filter.since)) return false
  return filter.until === undefined || at < Date.parse(filter.until)
}

/**
 * The queues whose dead letters `filter` takes: the handler's, or all.
 * @throws MessagingAdminError 404 for a handler this service does not have
 */
function queuesOfFilter(context: AdminContext, filter: BulkFilter): readonly AdminQueue[] {
  if (filter.handler === undefined) return context.queues
  const found = context.queues.filter((q) => q.handler === filter.handler)
  if (found.length > 0) return found
  const known = context.queues.map((q) => q.handler).join(', ') || 'none'
  throw new MessagingAdminError(
    404,
    `${context.service} has no handler '${filter.handler}' (its handlers: ${known})`,
    [{ path: 'body.filter.handler', issue: 'is not a handler of this service' }],
  )
}

/** @throws MessagingAdminError 400 for a filter the kind cannot take or an empty time window */
function checkFilter(kind: BulkKind, filter: BulkFilter): void {
  if (kind === 'retry' && filter.handler !== undefined)
    throw new MessagingAdminError(400, 'parked outbox rows have no handler: filter them by type', [
      { path: 'body.filter.handler', issue: 'is not a filter of parked rows' },
    ])
  if (
    filter.since !== undefined &&
    filter.until !== undefined &&
    Date.parse(filter.since) >= Date.parse(filter.until)
  )
    throw new MessagingAdminError(400, 'the time window is empty', [
      { path: 'body.filter.until', issue: 'must be after since' },
    ])
}

/** The parameters of the parked-row statements: type, reason, since, until. */
const parkedParams = (filter: BulkFilter) => [
  filter.type ?? null,
  filter.reason ?? null,
  filter.since ?? null,
  filter.until ?? null,
]

/** `MessagingAdmin.bulkPreview`: counts what `request` would act on and shows a few; changes nothing. */
export async function bulkPreview(
  context: AdminContext,
  kind: BulkKind,
  filter: BulkFilter,
): Promise<BulkPreview> {
  checkFilter(kind, filter)
  if (kind === 'retry') {
    const { rows } = await context.pool.query(COUNT_PARKED_MATCHING, parkedParams(filter))
    const matched = (rows[0] as { count: number }).count
    const sample = await context.pool.query(PARKED_MATCHING, [...parkedParams(filter), SAMPLE_SIZE])
    return { kind, filter, matched, scanned: matched, complete: true, sample: toRecords(sample.rows) }
  }
  const chosen = queuesOfFilter(context, filter)
  return context.exclusive(async () => {
    const connection = await context.broker()
    const preview: BulkPreview = { kind, filter, matched: 0, scanned: 0, complete: true, sample: [] }
    for (const q of chosen) {
      const count = await browseQueue(connection, q.deadLetterQueue, SCAN_LIMIT, (message) => {
        preview.scanned++
        const letter = describeDeadLetter(message)
        if (!letterMatches(letter, filter)) return false
        preview.matched++
        if (preview.sample.length < SAMPLE_SIZE) preview.sample.push(letter)
        return false
      }).catch(missing)
      if (count > SCAN_LIMIT) preview.complete = false
    }
    return preview
  })
}

/** 0 for a dead-letter queue the broker does not have (a handler never started); other errors rethrown. */
function missing(error: unknown): number {
  if ((error as { code?: unknown }).code === 404) return 0
  throw error
}

/**
 * One batch of a dead-letter bulk job: up to `max` matching letters not yet taken by the job
 * (`taken`: a requeued letter that fails again comes back with its id, and is not taken twice),
 * each republished and confirmed (requeue) before it is acked. A letter without a message id is
 * left where it is (the inbox could not recognise a copy of it).
 */
async function deadLetterBatch(
  context: AdminContext,
  kind: 'requeue' | 'discard',
  chosen: readonly AdminQueue[],
  filter: BulkFilter,
  taken: Set<string>,
  max: number,
): Promise<BulkBatch> {
  const ids: string[] = []
  await context.exclusive(async () => {
    const connection = await context.broker()
    for (const q of chosen) {
      if (ids.length >= max) break
      const confirm = kind === 'requeue' ? await handlerChannel(connection, q) : undefined
      try {
        await browseQueue(
          connection,
          q.deadLetterQueue,
          SCAN_LIMIT,
          async (message, channel) => {
            if (ids.length >= max) return false
            const letter = describeDeadLetter(message)
            const id = letter.messageId
            if (id === null || taken.has(id) || !letterMatches(letter, filter)) return false
            taken.add(id)
            if (confirm) await republish(confirm, q.queue, message)
            channel.ack(message)
            ids.push(id)
            return true
          },
          () => ids.length >= max,
        ).catch(missing)
      } finally {
        await confirm?.close().catch(() => undefined)
      }
    }
  })
  return { ids, failed: 0, exhausted: ids.length < max }
}

/**
 * A confirm channel for republishing into `q`'s handler queue, once that queue is known to exist
 * (a queue that is gone would swallow the copies and the acked originals).
 * @throws MessagingAdminError 409 when the handler queue does not exist
 */
async function handlerChannel(connection: ChannelModel, q: AdminQueue): Promise<ConfirmChannel> {
  const confirm = await connection.createConfirmChannel()
  confirm.on('error', () => undefined)
  await confirm.checkQueue(q.queue).catch(async (error: unknown) => {
    await confirm.close().catch(() => undefined)
    if ((error as { code?: unknown }).code !== 404) throw error
    throw new MessagingAdminError(409, `the queue '${q.queue}' does not exist: start its consumer first`)
  })
  return confirm
}

/** One batch of a parked-row bulk job: up to `max` matching rows made pending, then the relays woken. */
async function parkedBatch(context: AdminContext, filter: BulkFilter, max: number): Promise<BulkBatch> {
  const { rows } = await context.pool.query(RETRY_PARKED_MATCHING, [...parkedParams(filter), max])
  const ids = (rows as { id: string }[]).map((row) => row.id)
  if (ids.length > 0) await context.wake()
  return { ids, failed: 0, exhausted: ids.length < max }
}

const ACTIONS: Record<BulkKind, { action: string; done: string }> = {
  requeue: { action: 'dead-letters.requeue', done: 'requeued' },
  discard: { action: 'dead-letters.discard', done: 'discarded' },
  retry: { action: 'parked.retry', done: 'retried' },
}

/**
 * `MessagingAdmin.bulkStart`: counts the matches (the dry run's count, kept in the job and its
 * record), then starts a job that acts on up to `limit` of them at `ratePerSecond`, recorded as one
 * action when it ends: `detail` holds `bulk: true`, the filter, `matched`, the count done under its
 * outcome's name (`requeued`, `discarded`, `retried`), `failed`, `limit`, `ratePerSecond`, the
 * end state and the role. Throws as `bulkPreview`.
 */
export async function bulkStart(
  context: AdminContext,
  jobs: BulkJobs,
  request: BulkRequest,
): Promise<BulkJob> {
  const { kind, filter } = request
  const preview = await bulkPreview(context, kind, filter)
  const chosen = kind === 'retry' ? [] : queuesOfFilter(context, filter)
  const taken = new Set<string>()
  const { action, done } = ACTIONS[kind]
  return jobs.start({
    action,
    filter: { ...filter },
    limit: request.limit,
    ratePerSecond: request.ratePerSecond,
    matched: preview.matched,
    batch: (max) =>
      kind === 'retry'
        ? parkedBatch(context, filter, max)
        : deadLetterBatch(context, kind, chosen, filter, taken, max),
    record: (job, ids) =>
      recordAdminAction(context.pool, {
        actor: request.actor,
        action,
        target: kind === 'retry' ? 'outbox_message' : chosen.map((q) => q.deadLetterQueue).join(','),
        ids,
        detail: {
          bulk: true,
          jobId: job.id,
          filter: job.filter,
          matched: job.matched,
          [done]: job.done,
          failed: job.failed,
          limit: job.limit,
          ratePerSecond: job.ratePerSecond,
          state: job.state,
          ...(job.error === null ? {} : { error: job.error }),
          ...(request.role === undefined ? {} : { role: request.role }),
        },
      }),
  })
}
