/**
 * Every SQL statement of the messaging core, so the whole database contract (the tables of
 * `sql/messaging.sql`) is audited in one sitting. A statement sent alone is parameterised (`$1`,
 * ...: values never become SQL text). Several statements sent as one simple query (one round trip)
 * cannot take parameters: their values are inlined only through `literal`, `int`, `uuidArray` and
 * `identifier`, each refusing what it cannot write safely, and their results are checked with
 * `expectResults` before any is used.
 */

import type { InboxEntry } from './types.js'

// --- Inlining values into simple-query text ---

/** Thrown when a value cannot be inlined into SQL text (a NUL byte, a non-integer, a non-UUID id). */
export class SqlValueError extends Error {
  override name = 'SqlValueError'
}

/** A character that needs more than plain quoting: NUL, a single quote or a backslash. */
const NEEDS_ESCAPING = /[\0'\\]/

/**
 * `value` as a SQL string constant, or `NULL` for null. Safe whatever the server's
 * `standard_conforming_strings`: a value without backslashes is `'...'` with each `'` doubled
 * (read the same with the setting on or off); a value with backslashes is an escape string
 * `E'...'` with each `\` and `'` doubled (read the same whatever the setting). Examples:
 * `literal("it's")` -> `'it''s'`, `literal('a\\b')` -> `E'a\\\\b'`, `literal(null)` -> `NULL`.
 * @throws SqlValueError for a NUL character: PostgreSQL text cannot hold one, and in a simple
 * query it would end the statement's text where it stands.
 */
export function literal(value: string | null): string {
  if (value === null) return 'NULL'
  if (!NEEDS_ESCAPING.test(value)) return `'${value}'`
  if (value.includes('\0'))
    throw new SqlValueError('a NUL character (U+0000) cannot be sent to PostgreSQL as text')
  const quoted = value.replaceAll("'", "''")
  return value.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`
}

/**
 * `value` as an integer constant. `what` names the value in the error.
 * @throws SqlValueError when `value` is not a safe integer (NaN, Infinity, 1.5, 2^53)
 */
export function int(value: number, what = 'value'): string {
  if (!Number.isSafeInteger(value)) throw new SqlValueError(`${what} must be an integer, got ${value}`)
  return String(value)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * `ids` as a `uuid[]` constant, `'{id,id}'::uuid[]`. Each id is checked to be a UUID (hex and
 * dashes only), so none can end the constant. `what` names the caller in the error.
 * @throws SqlValueError naming `what` when an id is not a UUID
 */
export function uuidArray(ids: readonly string[], what: string): string {
  if (!ids.every((id) => UUID.test(id))) throw new SqlValueError(`${what}: every id must be a UUID`)
  return `'{${ids.join(',')}}'::uuid[]`
}

/**
 * `name` as a quoted identifier, `"..."` with each `"` doubled; the case is kept (`LISTEN "Outbox"`
 * listens on `Outbox`, as `pg_notify('Outbox', ...)` sends).
 * @throws SqlValueError for an empty name or one with a NUL character
 */
export function identifier(name: string): string {
  if (name === '' || name.includes('\0'))
    throw new SqlValueError('an identifier must be non-empty and hold no NUL character')
  return `"${name.replaceAll('"', '""')}"`
}

// --- Reading a simple query's results ---

/** One statement's result, as pg gives it: its command tag, affected rows and returned rows. */
export interface StatementResult<R = unknown> {
  command: string
  rowCount: number | null
  rows: R[]
}

/**
 * Thrown when a simple query's results are not the ones its statements give: a COMMIT answered
 * `ROLLBACK` (the transaction had already failed: a statement's error was caught and the
 * transaction went on), or a count or command that does not match.
 */
export class SqlResultError extends Error {
  override name = 'SqlResultError'
}

/**
 * The results of a simple query (pg gives one result for one statement, an array for several),
 * checked against `commands`, the command tag each statement gives (`'BEGIN'`, `'SET'`, `'INSERT'`,
 * `'COMMIT'`...; undefined: any). `what` names the query in the error.
 * @throws SqlResultError when the count or a command differs; a `COMMIT` answered `ROLLBACK` is
 * reported as the rolled-back transaction it is.
 */
export function expectResults(
  results: StatementResult | StatementResult[],
  commands: readonly (string | undefined)[],
  what: string,
): StatementResult[] {
  const all = Array.isArray(results) ? results : [results]
  let matches = all.length === commands.length
  for (let i = 0; matches && i < all.length; i += 1) {
    const expected = commands[i]
    matches = expected === undefined || all[i]?.command === expected
  }
  if (matches) return all
  const got = all.map((result) => result.command)
  if (commands.at(-1) === 'COMMIT' && got.at(-1) === 'ROLLBACK')
    throw new SqlResultError(
      `${what}: the transaction was rolled back at COMMIT, nothing was written (a statement in it had failed)`,
    )
  throw new SqlResultError(
    `${what}: expected results ${commands.map((c) => c ?? '*').join(', ')}, the server answered ${got.join(', ')}`,
  )
}

// --- Transactions ---

export const BEGIN = 'BEGIN'
export const COMMIT = 'COMMIT'
export const ROLLBACK = 'ROLLBACK'

/**
 * Whether a pg client is inside a transaction, for pg older than 8.12 (which does not keep the
 * server's transaction status): the SAVEPOINT fails outside a transaction block.
 */
export const SAVEPOINT_PROBE = 'SAVEPOINT messaging_probe'
export const RELEASE_SAVEPOINT_PROBE = 'RELEASE SAVEPOINT messaging_probe'

/**
 * `statement` in a transaction of its own with `lock_timeout` and `statement_timeout` set for that
 * transaction only (ms): `BEGIN; SET LOCAL ...; SET LOCAL ...; <statement>; COMMIT`, one round trip.
 * Its results: `BOUNDED_RESULTS` (the statement's is the fourth).
 * @throws SqlValueError for a bound that is not an integer
 */
export const bounded = (statement: string, lockTimeoutMs: number, statementTimeoutMs: number): string =>
  `BEGIN; SET LOCAL lock_timeout = ${int(lockTimeoutMs, 'lockTimeoutMs')}; ` +
  `SET LOCAL statement_timeout = ${int(statementTimeoutMs, 'statementTimeoutMs')}; ${statement}; COMMIT`

/** The commands `bounded` answers with, the statement's own left open. */
export const BOUNDED_RESULTS = ['BEGIN', 'SET', 'SET', undefined, 'COMMIT'] as const

// --- Producer: enqueue, and the outbox INSERTs sent with a pgDatabase transaction's COMMIT ---

/**
 * The start of every outbox INSERT, up to the column list's open end: the values follow in this
 * order, a held row adds `available_at`. `occurred_at` is always left to the database's `now()`:
 * every age, backoff and retention judgement on the row compares it with the database's clock, so a
 * service whose clock is off cannot make a row look old at birth or hide a stuck one.
 */
const OUTBOX_INSERT_INTO = 'INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id'

/** `enqueue`'s INSERT in any transaction but a pgDatabase one: $1 id, $2 type, $3 routing key, $4 payload JSON, $5 headers JSON, $6 aggregate id or null. */
export const OUTBOX_INSERT = `${OUTBOX_INSERT_INTO}) VALUES ($1::uuid, $2, $3, $4::jsonb, $5::jsonb, $6)`

/** An outbox row's values as `enqueue` writes them; the JSON is serialised already. */
export interface OutboxInsertValues {
  id: string
  type: string
  routing_key: string
  payload_json: string
  headers_json: string
  aggregate_id: string | null
}

const outboxValues = (row: OutboxInsertValues): string =>
  `${literal(row.id)}::uuid, ${literal(row.type)}, ${literal(row.routing_key)}, ` +
  `${literal(row.payload_json)}, ${literal(row.headers_json)}, ${literal(row.aggregate_id)}`

/**
 * `OUTBOX_INSERT` inlined, to send with COMMIT; the row is due at once. Answers `INSERT`.
 * @throws SqlValueError for a value with a NUL character
 */
export const dueOutboxInsert = (row: OutboxInsertValues): string =>
  `${OUTBOX_INSERT_INTO}) VALUES (${outboxValues(row)})`

/**
 * `OUTBOX_INSERT` inlined, to send with COMMIT, the row held from the relay's sweep for `holdMs`
 * (whole ms) past `clock_timestamp()`: the COMMIT message's time, not the transaction's start.
 * Answers `INSERT` and the row's `occurred_at`. @throws SqlValueError (NUL, `holdMs` not an integer)
 */
export const heldOutboxInsert = (row: OutboxInsertValues, holdMs: number): string =>
  `${OUTBOX_INSERT_INTO}, available_at) VALUES (${outboxValues(row)}, ` +
  `clock_timestamp() + ${int(holdMs, 'holdMs')} * interval '1 millisecond') RETURNING occurred_at`

// --- Relay: the sweep's claim and marks, publish on commit's marks, the wake-up ---

/** The columns `toPublishable` needs, and the row's age by the database's clock. */
export const OUTBOX_COLUMNS =
  'id, type, routing_key, payload, headers, aggregate_id, occurred_at, attempts, ' +
  '(extract(epoch from clock_timestamp() - occurred_at) * 1000)::float8 AS age_ms'

/** Bounds of the relay's claim transaction, ms (see `beginAndClaim` in outbox/rows.ts for why). */
export interface ClaimBounds {
  /** `idle_in_transaction_session_timeout` and `statement_timeout`. */
  guardMs: number
  lockTimeoutMs: number
}

/**
 * Opens the relay's transaction and claims up to `limit` due rows, oldest first, locked for this
 * transaction and skipped by every other (`FOR UPDATE SKIP LOCKED`); `only`: among these ids alone.
 * Answers `CLAIM_RESULTS`, the rows in the last.
 * @throws SqlValueError for a number that is not an integer or an id that is not a UUID
 */
export const claimDue = (limit: number, bounds: ClaimBounds, only?: readonly string[]): string =>
  `BEGIN;
     SET LOCAL idle_in_transaction_session_timeout = ${int(bounds.guardMs, 'guardMs')};
     SET LOCAL statement_timeout = ${int(bounds.guardMs, 'guardMs')};
     SET LOCAL lock_timeout = ${int(bounds.lockTimeoutMs, 'lockTimeoutMs')};
     SET LOCAL synchronous_commit = off;
     SELECT ${OUTBOX_COLUMNS} FROM outbox_message
     WHERE published_at IS NULL AND failed_at IS NULL AND available_at <= now() ${only ? `AND id = ANY(${uuidArray(only, 'claim')})` : ''}
     ORDER BY available_at, id
     LIMIT ${int(limit, 'limit')}
     FOR UPDATE SKIP LOCKED`

/** The commands `claimDue` answers with. */
export const CLAIM_RESULTS = ['BEGIN', 'SET', 'SET', 'SET', 'SET', 'SELECT'] as const

/**
 * Marks the claimed rows `ids` published and commits the claim's transaction, one round trip.
 * Answers `UPDATE`, `COMMIT`.
 * @throws SqlValueError for an id that is not a UUID
 */
export const markPublishedAndCommit = (ids: readonly string[]): string =>
  `UPDATE outbox_message SET published_at = now() WHERE id = ANY(${uuidArray(ids, 'markPublished')}); COMMIT`

/**
 * Records failed publishes, one row per element of the arrays: $1 ids, $2 errors, $3 delays (ms),
 * $4 max attempts, $5 parkable, $6 counts an attempt, $7 park now. Returns each row's id, type,
 * attempts and whether it is parked.
 */
export const MARK_FAILED = `UPDATE outbox_message AS o SET
       attempts = o.attempts + f.counts::int,
       last_error = left(f.error, 2000),
       available_at = now() + f.delay_ms * interval '1 millisecond',
       failed_at = CASE WHEN f.park_now OR (f.parkable AND o.attempts + 1 >= $4) THEN now() END
     FROM unnest($1::uuid[], $2::text[], $3::int[], $5::bool[], $6::bool[], $7::bool[])
       AS f(id, error, delay_ms, parkable, counts, park_now)
     WHERE o.id = f.id
     RETURNING o.id, o.type, o.attempts, o.failed_at IS NOT NULL AS parked`

/**
 * Publish on commit: marks `ids` published where they are still pending and still held more than
 * `stillHeldMs` ahead (a row made due meanwhile belongs to the relay's sweep again), in a
 * transaction that needs no WAL flush of its own. Answers `MARK_HELD_RESULTS`.
 * @throws SqlValueError for an id that is not a UUID or a `stillHeldMs` that is not an integer
 */
export const markHeldPublished = (ids: readonly string[], stillHeldMs: number): string =>
  `BEGIN; SET LOCAL synchronous_commit = off;
   UPDATE outbox_message SET published_at = now()
    WHERE id = ANY(${uuidArray(ids, 'publish on commit')}) AND published_at IS NULL
      AND available_at > now() + interval '${int(stillHeldMs, 'stillHeldMs')} milliseconds';
   COMMIT`

/** The commands `markHeldPublished` answers with. */
export const MARK_HELD_RESULTS = ['BEGIN', 'SET', 'UPDATE', 'COMMIT'] as const

/** Publish on commit: makes the pending rows of $1 (uuid[]) due now, for the relay's sweep. */
export const GIVE_BACK =
  'UPDATE outbox_message SET available_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL'

/** Wakes the relays of other processes: $1 the channel, $2 this process's id (the payload). */
export const NOTIFY = 'SELECT pg_notify($1, $2)'

/**
 * Listens on `channel` (LISTEN takes no parameters).
 * @throws SqlValueError for an empty channel or one with a NUL character
 */
export const listen = (channel: string): string => `LISTEN ${identifier(channel)}`

// --- Inbox and consumer ---

/** Records that $2 (handler) takes message $1 (uuid); affects no row when the pair is already there. */
export const INBOX_INSERT =
  'INSERT INTO inbox_message (message_id, handler) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING'

const inboxValues = (entry: InboxEntry): string =>
  `(${literal(entry.messageId)}::uuid, ${literal(entry.handler)})`

/**
 * `INBOX_INSERT` of `entries` (at least one) in one statement with the values inlined.
 * @throws SqlValueError for a value with a NUL character
 */
export const inboxInsert = (entries: readonly InboxEntry[]): string =>
  `INSERT INTO inbox_message (message_id, handler) VALUES ${entries.map(inboxValues).join(', ')} ON CONFLICT DO NOTHING`

/**
 * BEGIN and `INBOX_INSERT` of `entry` with its values inlined, one round trip. Answers `BEGIN`,
 * `INSERT` (1 row: new; 0: a duplicate).
 * @throws SqlValueError for a value with a NUL character
 */
export const beginWithInboxInsert = (entry: InboxEntry): string => `BEGIN;\n${inboxInsert([entry])}`

/**
 * BEGIN and one multi-row inbox INSERT of `entries`, one round trip. Answers `BEGIN`, `INSERT`
 * with the new pairs' message ids as `id` (lower-case text; a duplicate's is absent).
 * @throws SqlValueError for a value with a NUL character
 */
export const beginWithInboxBatchInsert = (entries: readonly InboxEntry[]): string =>
  'BEGIN;\nINSERT INTO inbox_message (message_id, handler) VALUES ' +
  entries.map(inboxValues).join(', ') +
  ' ON CONFLICT DO NOTHING RETURNING message_id::text AS id'

/** The commands `beginWithInboxInsert` and `beginWithInboxBatchInsert` answer with. */
export const BEGIN_WITH_INBOX_RESULTS = ['BEGIN', 'INSERT'] as const

// --- Retention (run through `bounded`: a simple query, so the numbers are inlined) ---

/**
 * Deletes up to `limit` published outbox rows published more than `ageMs` ago, oldest first. Only
 * published rows: pending and parked rows have `published_at` NULL and never match. The subselect
 * walks the `published_at` partial index; SKIP LOCKED keeps concurrent relays from queueing on
 * each other's chunks.
 * @throws SqlValueError for a number that is not an integer
 */
export const deletePublishedOutbox = (
  ageMs: number,
  limit: number,
): string => `DELETE FROM outbox_message WHERE id IN (
  SELECT id FROM outbox_message
  WHERE published_at IS NOT NULL AND published_at < now() - ${int(ageMs, 'ageMs')} * interval '1 millisecond'
  ORDER BY published_at
  LIMIT ${int(limit, 'limit')}
  FOR UPDATE SKIP LOCKED)`

/**
 * Deletes up to `limit` inbox rows received more than `ageMs` ago, oldest first.
 * @throws SqlValueError for a number that is not an integer
 */
export const deleteOldInbox = (ageMs: number, limit: number): string => `DELETE FROM inbox_message
  WHERE (message_id, handler) IN (
  SELECT message_id, handler FROM inbox_message
  WHERE received_at < now() - ${int(ageMs, 'ageMs')} * interval '1 millisecond'
  ORDER BY received_at
  LIMIT ${int(limit, 'limit')}
  FOR UPDATE SKIP LOCKED)`

/** Sets the session's `statement_timeout` to $1 (ms, as text); VACUUM cannot run in a transaction, so no SET LOCAL. */
export const SET_SESSION_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', $1, false)"
/** Back to the connection's own default (its startup options). */
export const RESET_STATEMENT_TIMEOUT = 'RESET statement_timeout'
/** Vacuums the outbox unless another session (a relay, autovacuum) is vacuuming it already. */
export const VACUUM_OUTBOX = 'VACUUM (SKIP_LOCKED) outbox_message'

// --- Stats (run through `bounded`) ---

/** Pending rows and the oldest one's age (ms, database clock), through the pending partial index. */
export const PENDING_STATS = `SELECT count(*)::int AS pending,
            (extract(epoch FROM now() - min(occurred_at)) * 1000)::float8 AS oldest_ms
     FROM outbox_message WHERE published_at IS NULL AND failed_at IS NULL`

/** Parked rows (no index covers `failed_at`: a scan). */
export const PARKED_COUNT =
  'SELECT count(*)::int AS parked FROM outbox_message WHERE failed_at IS NOT NULL AND published_at IS NULL'

// --- Testing ---

/** The outbox rows of aggregate $1 in enqueue order (ids are UUIDv7). */
export const OUTBOX_OF_AGGREGATE =
  'SELECT type, routing_key, payload, headers FROM outbox_message WHERE aggregate_id = $1 ORDER BY id'

// --- Per-key order (inbox/ordering.ts; README "Per-key order") ---

/**
 * The producer's next sequence number of key $2 under routing key $1, in the caller's transaction:
 * the row stays locked until that transaction ends, so for one key sequence order is commit order
 * (a rollback gives its number back). Returns `seq` (bigint, as text).
 */
export const NEXT_SEQUENCE = `INSERT INTO ordering_sequence (routing_key, key, seq) VALUES ($1, $2, 1)
  ON CONFLICT (routing_key, key) DO UPDATE SET seq = ordering_sequence.seq + 1 RETURNING seq::text AS seq`

/**
 * The cursor of handler $1, producer $2, key $3, locked for the transaction: `last_seq` (text),
 * `settling` (not started yet: its key was first seen above sequence 1) and `settled_past` (text:
 * where a settled cursor started; 0 otherwise); no row when it is new.
 */
export const LOCK_CURSOR = `SELECT last_seq::text AS last_seq, settling_since IS NOT NULL AS settling,
    settled_past::text AS settled_past
  FROM ordering_cursor WHERE handler = $1 AND producer = $2 AND key = $3 FOR UPDATE`

/**
 * Creates the cursor of handler $1, producer $2, key $3 at 0 unless it exists (then `LOCK_CURSOR`
 * again); settling from now when $4 is true (its first delivery is above sequence 1).
 */
export const CREATE_CURSOR = `INSERT INTO ordering_cursor (handler, producer, key, settling_since, held)
  VALUES ($1, $2, $3, CASE WHEN $4::boolean THEN now() END, false) ON CONFLICT DO NOTHING`

/**
 * After the handler of sequence $4 (handler $1, producer $2, key $3) failed and rolled back: a
 * cursor that did not exist is made at $4 - 1, a settling one starts where it is (at 0, as only
 * sequence 1 runs on it), so the key's order counts from this message and the settle window's
 * start cannot pass over it while it is retried. A started cursor is left as it is.
 */
export const START_CURSOR = `INSERT INTO ordering_cursor AS c (handler, producer, key, last_seq)
  VALUES ($1, $2, $3, $4::bigint - 1)
  ON CONFLICT (handler, producer, key) DO UPDATE SET settling_since = NULL
  WHERE c.settling_since IS NOT NULL`

/**
 * Starts handler $1's cursors that have settled for more than $2 ms just below their lowest held
 * sequence (recorded as `settled_past`); returns each one's `producer`, `key` and that sequence `seq` (text), now ready to
 * drain. A settling cursor without a held delivery stays as it is.
 */
export const START_SETTLED = `UPDATE ordering_cursor c SET settling_since = NULL,
    last_seq = (SELECT min(w.seq) FROM ordering_waiting w
      WHERE w.handler = c.handler AND w.producer = c.producer AND w.key = c.key) - 1,
    settled_past = (SELECT min(w.seq) FROM ordering_waiting w
      WHERE w.handler = c.handler AND w.producer = c.producer AND w.key = c.key) - 1
  WHERE c.handler = $1 AND c.settling_since < now() - $2::int * interval '1 millisecond'
    AND EXISTS (SELECT 1 FROM ordering_waiting w
      WHERE w.handler = c.handler AND w.producer = c.producer AND w.key = c.key)
  RETURNING c.producer, c.key, (c.last_seq + 1)::text AS seq`

/** The cursor's identity and a sequence number, as SQL text (parameters or inlined values). */
type CursorText = { handler: string; producer: string; key: string; seq: string }
const CURSOR_PARAMS: CursorText = { handler: '$1', producer: '$2', key: '$3', seq: '$4::bigint' }

// A plain UPDATE, not an upsert: ON CONFLICT DO UPDATE locks the row before updating it, one more
// row write per message. Sequence 1 makes the cursor instead (a key's first message); a cursor
// that exists already then takes the slower path (LOCK_CURSOR).
const moveCursorSql = ({ handler, producer, key, seq }: CursorText, first: boolean): string =>
  first
    ? `INSERT INTO ordering_cursor (handler, producer, key, last_seq, held)
  VALUES (${handler}, ${producer}, ${key}, 1, false) ON CONFLICT DO NOTHING RETURNING true AS moved, false AS marked`
    : `UPDATE ordering_cursor SET last_seq = ${seq}
  WHERE handler = ${handler} AND producer = ${producer} AND key = ${key} AND last_seq = ${seq} - 1
  RETURNING true AS moved, held OR blocked_by IS NOT NULL OR settling_since IS NOT NULL AS marked`

/**
 * Moves the cursor of handler $1, producer $2, key $3 to sequence $4 when $4 is its next (the row
 * stays locked for the transaction); sequence 1 makes the cursor at 1 unless it exists. Returns
 * `moved` true then, and `marked`: whether deliveries of the key may be held, or the cursor is
 * blocked or settling (the transaction's end then runs `FINISH_MOVE`, which probes
 * `ordering_waiting` and clears those; otherwise it needs only the inbox pair). No row when the
 * cursor is not there yet (or already there, for sequence 1) or $4 is not its next.
 */
export const MOVE_CURSOR = moveCursorSql(CURSOR_PARAMS, false)

/** `MOVE_CURSOR` for sequence 1 (parameters $1-$3 only): makes the cursor at 1 unless it exists. */
export const FIRST_CURSOR = moveCursorSql(CURSOR_PARAMS, true)

/** The cursor's identity and a sequence as inlined SQL values. @throws SqlValueError (NUL, not an integer) */
const inlined = (cursor: readonly [string, string, string], seq: number): CursorText => ({
  handler: literal(cursor[0]),
  producer: literal(cursor[1]),
  key: literal(cursor[2]),
  seq: `${int(seq, 'sequence')}::bigint`,
})

/**
 * `MOVE_CURSOR` (`FIRST_CURSOR` for sequence 1) with its values inlined, to send with BEGIN, and
 * the command it answers. @throws SqlValueError
 */
export const moveCursor = (
  cursor: readonly [string, string, string],
  seq: number,
): { sql: string; command: 'UPDATE' | 'INSERT' } => ({
  sql: moveCursorSql(inlined(cursor, seq), seq === 1),
  command: seq === 1 ? 'INSERT' : 'UPDATE',
})

/** One ordered delivery of a batch: its producer, key and sequence number. */
export interface CursorMove {
  producer: string
  key: string
  sequence: number
}

/**
 * The statements that move the cursors of `handler` for a batch of ordered deliveries (no key
 * twice), to send with BEGIN, and the commands they answer: one multi-row `MOVE_CURSOR` for those
 * above sequence 1 and one multi-row `FIRST_CURSOR` for those at 1 (either absent when it has none).
 * Both return the `producer`, `key` and `marked` of each cursor that moved. The rows are listed in
 * (producer, key) order, so a plan that follows the list takes their locks in one order; where two
 * instances' batches deadlock on cursors anyway, PostgreSQL aborts one, and its deliveries fall
 * back to a transaction each (inbox/batch.ts).
 * @throws SqlValueError (NUL, not an integer)
 */
export function moveCursors(
  handler: string,
  moves: readonly CursorMove[],
): { sql: string; commands: Array<'UPDATE' | 'INSERT'> } {
  const sorted = [...moves].sort((a, b) =>
    a.producer < b.producer ? -1 : a.producer > b.producer ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  )
  const h = literal(handler)
  const later = sorted.filter((move) => move.sequence !== 1)
  const first = sorted.filter((move) => move.sequence === 1)
  const statements: string[] = []
  const commands: Array<'UPDATE' | 'INSERT'> = []
  if (later.length > 0) {
    const values = later
      .map((m) => `(${literal(m.producer)}, ${literal(m.key)}, ${int(m.sequence, 'sequence')}::bigint)`)
      .join(', ')
    statements.push(`UPDATE ordering_cursor c SET last_seq = v.seq
  FROM (VALUES ${values}) AS v (producer, key, seq)
  WHERE c.handler = ${h} AND c.producer = v.producer AND c.key = v.key AND c.last_seq = v.seq - 1
  RETURNING c.producer, c.key, c.held OR c.blocked_by IS NOT NULL OR c.settling_since IS NOT NULL AS marked`)
    commands.push('UPDATE')
  }
  if (first.length > 0) {
    const values = first.map((m) => `(${h}, ${literal(m.producer)}, ${literal(m.key)}, 1, false)`).join(', ')
    statements.push(`INSERT INTO ordering_cursor (handler, producer, key, last_seq, held) VALUES ${values}
  ON CONFLICT DO NOTHING RETURNING producer, key, false AS marked`)
    commands.push('INSERT')
  }
  return { sql: statements.join(';\n'), commands }
}

const finishMoveSql = ({ handler, producer, key, seq }: CursorText, messageId: string): string =>
  `WITH dropped AS (DELETE FROM ordering_waiting
      WHERE handler = ${handler} AND producer = ${producer} AND key = ${key} AND seq = ${seq}),
    inbox AS (INSERT INTO inbox_message (message_id, handler) VALUES (${messageId}::uuid, ${handler})
      ON CONFLICT DO NOTHING),
    flag AS (UPDATE ordering_cursor SET blocked_by = NULL, blocked_seq = NULL, blocked_since = NULL,
        blocked_reason = NULL, settling_since = NULL, held = EXISTS (SELECT 1 FROM ordering_waiting
          WHERE handler = ${handler} AND producer = ${producer} AND key = ${key} AND seq <> ${seq})
      WHERE handler = ${handler} AND producer = ${producer} AND key = ${key})
  SELECT EXISTS (SELECT 1 FROM ordering_waiting
    WHERE handler = ${handler} AND producer = ${producer} AND key = ${key} AND seq = ${seq} + 1) AS next`

/**
 * After the handler of message $5 ran on a moved cursor (handler $1, producer $2, key $3, sequence
 * $4) that was `marked`: drops a held copy of the message, records the inbox pair, unblocks and
 * starts the cursor, keeps `held` true only while another delivery of the key is held, and returns
 * `next`: whether sequence $4 + 1 is held now. (The cursor's row lock, taken by the move, keeps
 * holds of the key out meanwhile.) An unmarked cursor needs only the inbox pair (`INBOX_INSERT`).
 */
export const FINISH_MOVE = finishMoveSql(CURSOR_PARAMS, '$5')

/** `FINISH_MOVE` with its values inlined, to send with COMMIT. Answers `SELECT`. @throws SqlValueError */
export const finishMove = (
  cursor: readonly [string, string, string],
  seq: number,
  messageId: string,
): string => finishMoveSql(inlined(cursor, seq), literal(messageId))

/**
 * Holds a delivery that came before its predecessor: handler $1, producer $2, key $3, sequence $4,
 * message id $5, routing key $6, body $7 (bytea), AMQP properties $8 (JSON), and marks the cursor
 * (locked by the caller) as holding. A copy put back that came before its predecessor again makes
 * the held row claimable again (`put_back_at` NULL).
 */
export const HOLD_WAITING = `WITH flag AS (UPDATE ordering_cursor SET held = true
    WHERE handler = $1 AND producer = $2 AND key = $3 AND NOT held)
  INSERT INTO ordering_waiting
  (handler, producer, key, seq, message_id, routing_key, content, properties)
  VALUES ($1, $2, $3, $4::bigint, $5::uuid, $6, $7::bytea, $8::jsonb)
  ON CONFLICT (handler, producer, key, seq) DO UPDATE SET put_back_at = NULL`

/**
 * After the handler of message $5 (sequence $4 of handler $1, producer $2, key $3) ran: the cursor
 * moves to $4 and is unblocked, a held copy of the message is dropped, the inbox records the pair,
 * `held` stays true only while another delivery of the key is held.
 * Returns `next`: whether sequence $4 + 1 waits now.
 */
export const ADVANCE_CURSOR = `WITH dropped AS (
    DELETE FROM ordering_waiting WHERE handler = $1 AND producer = $2 AND key = $3 AND seq = $4::bigint),
  inbox AS (INSERT INTO inbox_message (message_id, handler) VALUES ($5::uuid, $1) ON CONFLICT DO NOTHING)
  UPDATE ordering_cursor SET last_seq = $4::bigint, blocked_by = NULL, blocked_seq = NULL,
    blocked_since = NULL, blocked_reason = NULL, settling_since = NULL,
    held = EXISTS (SELECT 1 FROM ordering_waiting
      WHERE handler = $1 AND producer = $2 AND key = $3 AND seq <> $4::bigint)
  WHERE handler = $1 AND producer = $2 AND key = $3
  RETURNING EXISTS (SELECT 1 FROM ordering_waiting
    WHERE handler = $1 AND producer = $2 AND key = $3 AND seq = $4::bigint + 1) AS next`

/**
 * Records that message $4 (sequence $5) of handler $1, producer $2, key $3 was dead-lettered with
 * reason $6: the key stays blocked until it is handled (requeued) or skipped (a settling cursor
 * starts: the window cannot pass over it). A held copy of it is dropped (it is in the dead-letter
 * queue now).
 */
export const BLOCK_CURSOR = `WITH dropped AS (DELETE FROM ordering_waiting
    WHERE handler = $1 AND producer = $2 AND key = $3 AND seq = $5::bigint)
  INSERT INTO ordering_cursor AS c
    (handler, producer, key, blocked_by, blocked_seq, blocked_since, blocked_reason)
  VALUES ($1, $2, $3, $4::uuid, $5::bigint, now(), left($6, 2000))
  ON CONFLICT (handler, producer, key) DO UPDATE SET blocked_by = $4::uuid, blocked_seq = $5::bigint,
    blocked_since = now(), blocked_reason = left($6, 2000), settling_since = NULL
  WHERE c.last_seq < $5::bigint`

/**
 * The held delivery of handler $1, producer $2, key $3 with sequence $4 (the cursor's next), unless
 * it was put back into the queue less than $5 ms ago (its copy is on the way: the queue's retries
 * and dead-lettering take it from there). Read under the cursor's lock.
 */
export const NEXT_HELD = `SELECT message_id::text AS message_id, routing_key, content, properties
  FROM ordering_waiting WHERE handler = $1 AND producer = $2 AND key = $3 AND seq = $4::bigint
    AND (put_back_at IS NULL OR put_back_at < now() - $5::int * interval '1 millisecond')`

/** Stamps the held delivery (handler $1, producer $2, key $3, sequence $4) as put back into the queue now. */
export const MARK_PUT_BACK = `UPDATE ordering_waiting SET put_back_at = now()
  WHERE handler = $1 AND producer = $2 AND key = $3 AND seq = $4::bigint`

/**
 * Handler $1's keys whose next delivery is held and can be handled now (sequence = the cursor's
 * + 1, not put back in the last $2 ms), at most $3: what a crash between a commit and its drain
 * left, or a key an operator skipped.
 */
export const READY_KEYS = `SELECT r.producer, r.key FROM ordering_waiting r
  JOIN ordering_cursor c ON c.handler = r.handler AND c.producer = r.producer AND c.key = r.key
  WHERE r.handler = $1 AND r.seq = c.last_seq + 1
    AND (r.put_back_at IS NULL OR r.put_back_at < now() - $2::int * interval '1 millisecond')
  LIMIT $3`

/**
 * Handler $1's order report for its sweep: `blocked` keys (a dead-lettered message), `waiting`
 * deliveries held, and `gaps`: keys whose lowest held sequence is past the cursor's next and was
 * held more than $2 ms ago (a predecessor that has not come), with up to 10 of them in `sample`
 * as `{ producer, key, lastSeq, firstWaiting, since }`.
 */
export const ORDERING_REPORT = `WITH gaps AS (
    SELECT w.producer, w.key, c.last_seq::text AS "lastSeq", min(w.seq)::text AS "firstWaiting",
      min(w.received_at) AS since
    FROM ordering_waiting w
    JOIN ordering_cursor c ON c.handler = w.handler AND c.producer = w.producer AND c.key = w.key
    WHERE w.handler = $1 AND c.blocked_by IS NULL
    GROUP BY w.producer, w.key, c.last_seq
    HAVING min(w.seq) > c.last_seq + 1 AND min(w.received_at) < now() - $2::int * interval '1 millisecond')
  SELECT (SELECT count(*)::int FROM ordering_cursor WHERE handler = $1 AND blocked_by IS NOT NULL) AS blocked,
    (SELECT count(*)::int FROM ordering_waiting WHERE handler = $1) AS waiting,
    (SELECT count(*)::int FROM gaps) AS gaps,
    (SELECT coalesce(json_agg(g), '[]'::json) FROM (SELECT * FROM gaps ORDER BY since LIMIT 10) g) AS sample`
