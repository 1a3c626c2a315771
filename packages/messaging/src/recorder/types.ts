import type { ConsumedMessage, MessageContract } from '../types.js'

/**
 * What a recorder runs its statement on: a pg Pool (or client), one `query` per batch; a config
 * with a `name` is a prepared statement, parsed once per connection.
 */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<QueryableResult>
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<QueryableResult>
}

/** What a `Queryable` query answers: pg's result, as far as recorders read it. */
export interface QueryableResult {
  rowCount: number | null
  rows: unknown[]
}

/**
 * A batch recorder: one queue, `<queuePrefix>.<name>`, bound to every routing key of `messages`, for
 * facts a service only records (a timeline, an audit trail) and never decides on. Deliveries are
 * written many at a time, with no inbox row or per-message transaction, so `record` must be
 * idempotent by message id (e.g. `INSERT … ON CONFLICT (message_id) DO NOTHING`) and atomic (one
 * statement, or its own transaction), and nothing else may react (no outbox row, no other table):
 * a fact some step acts on belongs to a `HandlerDefinition`. Example: an order's timeline.
 */
export interface RecorderDefinition {
  /** Unique within the service, kebab-case, e.g. `record-timeline`. */
  name: string
  /**
   * The types recorded; any other type (or one failing its schema) is dead-lettered, except another
   * version on the same routing key: recorded, unvalidated unless its contract is here too.
   */
  messages: ReadonlyArray<MessageContract<unknown>>
  /**
   * Records 1 to the batch size of validated messages, in delivery order. A database error of
   * SQLSTATE class 22 or 23, or a TypeError/RangeError, refuses the batch: each message is then
   * recorded alone, one refused alone dead-lettered. Other errors are retried with backoff, unacked.
   */
  record(messages: ReadonlyArray<ConsumedMessage<unknown>>, db: Queryable): Promise<void>
  /**
   * How long a batch waits for more deliveries after its first, ms (sooner once full). Default 0: a
   * batch is what one socket read brought. A timeline nobody waits for trades delay for larger batches.
   */
  windowMs?: number
}

/** Counters of one recorder since start; metrics read them. */
export interface RecorderCounters {
  /** Messages in committed batches (duplicates included: the recorder cannot tell them apart). */
  recordedTotal: number
  /** Committed `record` calls: the database round trips the recorder made. */
  batchesTotal: number
  /** Batches refused and retried one message at a time. */
  splitTotal: number
  /** Messages moved to the dead-letter queue (invalid, or refused when recorded alone). */
  deadLetteredTotal: number
}
