import type { ConsumedMessage, MessageContract } from '../types.js'

/**
 * What a recorder may run its statement on: a pg Pool (or client), one `query` per batch. The
 * second form is pg's query config: a statement with a `name` is parsed once per connection, and
 * once PostgreSQL settles on a generic plan (after five runs) only bound and executed.
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
   * The types recorded; a delivery of any other type (or that fails its schema) is dead-lettered,
   * except another version (`<name>.v<N>`) of one of them on its routing key: recorded, its payload
   * unvalidated unless its contract is here too, so `record` must take payloads of any version.
   */
  messages: ReadonlyArray<MessageContract<unknown>>
  /**
   * Records a batch of validated messages (1 to the recorder's batch size, in delivery order). A
   * database error of SQLSTATE class 22 or 23, or a TypeError/RangeError, refuses the batch: the
   * recorder then records each message alone and dead-letters one refused alone. Any other error is
   * taken for an unavailable database and the batch is retried with backoff, unacked.
   */
  record(messages: ReadonlyArray<ConsumedMessage<unknown>>, db: Queryable): Promise<void>
  /**
   * How long a batch waits for more deliveries after its first, ms; it is written sooner once it
   * holds the recorder's batch size. Default 0: the batch is what arrived in the same socket read,
   * so at low load every delivery is a batch of one, a statement and a commit each. A recorder
   * whose facts nobody waits for (a timeline read by people) trades this much delay for fewer,
   * larger batches at moderate load.
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
