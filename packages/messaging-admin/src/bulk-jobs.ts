import { randomUUID } from 'node:crypto'

/**
 * Where a bulk job stands: `running`; `stopping` once a stop was asked (the batch in flight ends
 * first); `stopped`, `done` (the limit reached or nothing left to match) or `failed` (a dependency
 * failed mid-way; `error` says what) at the end.
 */
export type BulkJobState = 'running' | 'stopping' | 'stopped' | 'done' | 'failed'

/** A bulk job as its routes answer it; times ISO 8601. */
export interface BulkJob {
  id: string
  /** What it does, e.g. `dead-letters.requeue`, `parked.retry`, `order.cancel`. */
  action: string
  /** The filter it was started with, as given. */
  filter: Record<string, unknown>
  state: BulkJobState
  /** Most items it acts on. */
  limit: number
  /** Most items a second. */
  ratePerSecond: number
  /** How many matched the filter when it started (its dry run's count), null when not counted. */
  matched: number | null
  /** Items acted on so far. */
  done: number
  /** Items that matched but could not be acted on (e.g. a dead letter without a message id). */
  failed: number
  startedAt: string
  endedAt: string | null
  /** The recorded action (`messaging_admin_action`), once the job ended having changed something. */
  actionId: string | null
  error: string | null
}

/** One batch of a job: what it acted on, how many it could not, and whether nothing is left. */
export interface BulkBatch {
  /** Ids acted on in this batch (kept in the record, at most `MAX_RECORDED_IDS` a job). */
  ids: string[]
  failed: number
  /** Nothing more matches: the job is done. */
  exhausted: boolean
}

/** What a job needs from its owner: one batch of at most `max` items, and the record at the end. */
export interface BulkWork {
  action: string
  filter: Record<string, unknown>
  limit: number
  ratePerSecond: number
  matched: number | null
  /** Acts on at most `max` more matching items (never twice on one id within the job). */
  batch: (max: number) => Promise<BulkBatch>
  /** Records the job as one action (its filter and counts); returns the action's id. */
  record: (job: BulkJob, ids: readonly string[]) => Promise<string>
}

/** Most ids kept in a job's record; the counts say how many there were. */
export const MAX_RECORDED_IDS = 1_000
/** Most finished jobs remembered (the oldest forgotten first). */
const KEPT_JOBS = 100

const ENDED: ReadonlySet<BulkJobState> = new Set(['stopped', 'done', 'failed'])

/** Waits `ms` or until `signal` aborts, whichever is first. */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })

/**
 * Bulk jobs of one admin, in memory: each runs in the background in batches of at most one
 * second's worth (`ratePerSecond`), paced so that after n items at least n / rate seconds have
 * passed, until its limit, nothing left to match, a stop, or an error. At the end it is recorded
 * once, with its filter and counts. A restart of the process forgets running jobs (what a batch did
 * stays done; nothing is recorded for the unfinished job).
 */
export class BulkJobs {
  private readonly jobs = new Map<string, { job: BulkJob; stop: AbortController; ended: Promise<void> }>()

  /** Starts `work` in the background; returns the job as it starts. */
  start(work: BulkWork): BulkJob {
    const job: BulkJob = {
      id: randomUUID(),
      action: work.action,
      filter: work.filter,
      state: 'running',
      limit: work.limit,
      ratePerSecond: work.ratePerSecond,
      matched: work.matched,
      done: 0,
      failed: 0,
      startedAt: new Date().toISOString(),
      endedAt: null,
      actionId: null,
      error: null,
    }
    const stop = new AbortController()
    const ended = this.run(job, work, stop.signal)
    this.jobs.set(job.id, { job, stop, ended })
    this.forgetOld()
    return { ...job }
  }

  /** The job `id` now, or undefined. */
  get(id: string): BulkJob | undefined {
    const entry = this.jobs.get(id)
    return entry && { ...entry.job }
  }

  /** Asks job `id` to stop after its batch in flight; the answer is the job then. Undefined when unknown. */
  stop(id: string): BulkJob | undefined {
    const entry = this.jobs.get(id)
    if (!entry) return undefined
    if (entry.job.state === 'running') entry.job.state = 'stopping'
    entry.stop.abort()
    return { ...entry.job }
  }

  /** Stops every job and waits until each has ended (and recorded what it did). */
  async close(): Promise<void> {
    for (const entry of this.jobs.values()) entry.stop.abort()
    await Promise.all([...this.jobs.values()].map((entry) => entry.ended))
  }

  private async run(job: BulkJob, work: BulkWork, signal: AbortSignal): Promise<void> {
    const ids: string[] = []
    const started = performance.now()
    let final: BulkJobState = 'done'
    try {
      while (job.done < job.limit) {
        if (signal.aborted) {
          final = 'stopped'
          break
        }
        const max = Math.min(job.limit - job.done, Math.max(1, Math.ceil(job.ratePerSecond)))
        const batch = await work.batch(max)
        job.done += batch.ids.length
        job.failed += batch.failed
        for (const id of batch.ids) if (ids.length < MAX_RECORDED_IDS) ids.push(id)
        if (batch.exhausted || batch.ids.length + batch.failed === 0) break
        // Paced: n items take at least n / rate seconds from the start.
        const due = started + (job.done * 1000) / job.ratePerSecond
        await pause(due - performance.now(), signal)
      }
    } catch (error) {
      final = 'failed'
      job.error = error instanceof Error ? error.message : String(error)
    }
    job.endedAt = new Date().toISOString()
    // Recorded before the state says it ended, so a job seen ended carries its action id.
    if (job.done > 0) {
      job.actionId = await work.record({ ...job, state: final }, ids).catch((error: unknown) => {
        job.error ??= `not recorded: ${error instanceof Error ? error.message : String(error)}`
        return null
      })
    }
    job.state = final
  }

  private forgetOld(): void {
    if (this.jobs.size <= KEPT_JOBS) return
    for (const [id, entry] of this.jobs) {
      if (this.jobs.size <= KEPT_JOBS) return
      if (ENDED.has(entry.job.state)) this.jobs.delete(id)
    }
  }
}
