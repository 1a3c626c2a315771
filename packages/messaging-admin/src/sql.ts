/**
 * Every SQL statement of the admin, in one place for a reviewer: each a constant with its
 * parameters numbered (`$1`…), values always passed as parameters, never written into the text.
 * The tables are `outbox_message` and `inbox_message` (`@saga/messaging/sql/messaging.sql`) and
 * `messaging_admin_action` (`@saga/messaging-admin/sql/messaging-admin.sql`).
 */

/** The columns an `OutboxRecord` is made of. */
const RECORD_COLUMNS =
  'id, type, routing_key, aggregate_id, headers, attempts, last_error, occurred_at, published_at, failed_at, payload'

// Parked: the relay gave up (failed_at) and never published; outbox_message_parked_idx covers it.
const PARKED = 'failed_at IS NOT NULL AND published_at IS NULL'

/** Records one admin action. `$1` actor, `$2` action, `$3` target, `$4` ids (text[]), `$5` detail (JSON text). */
export const INSERT_ADMIN_ACTION = `INSERT INTO messaging_admin_action (actor, action, target, ids, detail)
  VALUES ($1, $2, $3, $4::text[], $5::jsonb) RETURNING id::text AS id`

/** The newest `$1` admin actions, newest first. */
export const RECENT_ADMIN_ACTIONS = `SELECT id::text AS id, at, actor, action, target, ids, detail
  FROM messaging_admin_action ORDER BY id DESC LIMIT $1`

/**
 * The outbox's pending and parked counts, its oldest pending row and that row's age by the
 * database's clock (ms), in one statement on the two partial indexes.
 */
export const OUTBOX_SUMMARY = `SELECT p.pending, p.oldest,
    (SELECT count(*) FROM outbox_message WHERE ${PARKED})::int AS parked,
    (extract(epoch from clock_timestamp() - p.oldest) * 1000)::float8 AS age_ms
  FROM (SELECT count(*)::int AS pending, min(occurred_at) AS oldest FROM outbox_message
         WHERE published_at IS NULL AND failed_at IS NULL) p`

/** Outbox rows of aggregate `$1` by occurred_at, at most `$2` (index `outbox_message_aggregate_id_idx`). */
export const RECORDS_OF_AGGREGATE = `SELECT ${RECORD_COLUMNS} FROM outbox_message
  WHERE aggregate_id = $1 ORDER BY occurred_at, id LIMIT $2`

/**
 * Outbox rows found by an id someone holds: the row `$1` (uuid, the primary key) when it is not null,
 * else the rows whose `traceparent` header carries trace id `$2` (32 hex digits), at most `$3`, by
 * occurred_at. The trace id has no index of its own (it would cost every enqueue an index entry):
 * that branch reads the table, which retention keeps to the rows of the last hour or so.
 */
export const RECORDS_FOUND = `SELECT ${RECORD_COLUMNS} FROM outbox_message
  WHERE ($1::uuid IS NOT NULL AND id = $1::uuid)
     OR ($1::uuid IS NULL AND substr(headers->>'traceparent', 4, 32) = $2::text)
  ORDER BY occurred_at, id LIMIT $3`

/** Parked rows, oldest parked first, at most `$2`; of aggregate `$1` only unless `$1` is null. */
export const PARKED_RECORDS = `SELECT ${RECORD_COLUMNS} FROM outbox_message
  WHERE ${PARKED} AND ($1::text IS NULL OR aggregate_id = $1) ORDER BY failed_at, id LIMIT $2`

/** Of the row ids `$1` (uuid[]), the parked ones. */
export const PARKED_OF = `SELECT id FROM outbox_message WHERE id = ANY($1::uuid[]) AND ${PARKED}`

/** Makes the parked rows of `$1` (uuid[]) pending again (attempts 0, due now); returns their ids. */
export const RETRY_PARKED = `UPDATE outbox_message
  SET failed_at = NULL, attempts = 0, last_error = NULL, available_at = now()
  WHERE id = ANY($1::uuid[]) AND ${PARKED} RETURNING id`

// The bulk filter of parked rows: $1 type, $2 a part of last_error (any case), $3 parked at or
// after, $4 parked before; each null when not given.
const PARKED_FILTER = `${PARKED} AND ($1::text IS NULL OR type = $1)
  AND ($2::text IS NULL OR strpos(lower(coalesce(last_error, '')), lower($2)) > 0)
  AND ($3::timestamptz IS NULL OR failed_at >= $3) AND ($4::timestamptz IS NULL OR failed_at < $4)`

/** How many parked rows match the bulk filter `$1`-`$4` (see PARKED_FILTER). */
export const COUNT_PARKED_MATCHING = `SELECT count(*)::int AS count FROM outbox_message WHERE ${PARKED_FILTER}`

/** The first `$5` parked rows matching the bulk filter `$1`-`$4`, oldest parked first. */
export const PARKED_MATCHING = `SELECT ${RECORD_COLUMNS} FROM outbox_message
  WHERE ${PARKED_FILTER} ORDER BY failed_at, id LIMIT $5`

/**
 * Makes up to `$5` parked rows matching the bulk filter `$1`-`$4` pending again, oldest parked
 * first; rows another retry holds are skipped. Returns their ids.
 */
export const RETRY_PARKED_MATCHING = `UPDATE outbox_message
  SET failed_at = NULL, attempts = 0, last_error = NULL, available_at = now()
  WHERE id IN (SELECT id FROM outbox_message WHERE ${PARKED_FILTER}
    ORDER BY failed_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
  RETURNING id`

/** The inbox rows of the message ids `$1` (uuid[]), by received_at. */
export const INBOX_RECORDS = `SELECT message_id, handler, received_at FROM inbox_message
  WHERE message_id = ANY($1::uuid[]) ORDER BY received_at, handler`

/**
 * Wakes the relays listening on channel `$1` (payload `$2`): what `@saga/messaging`'s relays LISTEN
 * to for rows another process made due. A relay skips only NOTIFYs whose payload is its own id.
 */
export const NOTIFY_RELAYS = 'SELECT pg_notify($1, $2)'

/** The statements that open and end the transaction of a parked-row retry. */
export const BEGIN = 'BEGIN'
export const COMMIT = 'COMMIT'
export const ROLLBACK = 'ROLLBACK'

/**
 * Stuck ordered keys (`@saga/messaging`'s `ordering_cursor` and `ordering_waiting`), of handler $1
 * only unless null, oldest first, at most $3: those blocked by a dead-lettered message, and those
 * with a gap (the lowest held sequence is past the cursor's next and was held more than $2 ms ago).
 * Each with how many deliveries wait behind it and since when.
 */
export const STUCK_KEYS = `WITH candidates AS (
    SELECT handler, producer, key FROM ordering_cursor
      WHERE blocked_by IS NOT NULL AND ($1::text IS NULL OR handler = $1)
    UNION
    SELECT DISTINCT handler, producer, key FROM ordering_waiting WHERE $1::text IS NULL OR handler = $1)
  SELECT c.handler, c.producer, c.key, c.last_seq::text AS "lastSeq", c.blocked_by::text AS "blockedBy",
    c.blocked_seq::text AS "blockedSeq", c.blocked_since AS "blockedSince", c.blocked_reason AS reason,
    w.waiting, w.first_seq::text AS "firstWaiting", w.since AS "waitingSince"
  FROM candidates k
  JOIN ordering_cursor c ON c.handler = k.handler AND c.producer = k.producer AND c.key = k.key
  CROSS JOIN LATERAL (SELECT count(*)::int AS waiting, min(seq) AS first_seq, min(received_at) AS since
    FROM ordering_waiting o WHERE o.handler = c.handler AND o.producer = c.producer AND o.key = c.key) w
  WHERE c.blocked_by IS NOT NULL
     OR (w.first_seq > c.last_seq + 1 AND w.since < now() - $2::int * interval '1 millisecond')
  ORDER BY coalesce(c.blocked_since, w.since) LIMIT $3`

/** The cursor of handler $1, producer $2, key $3, locked, and its lowest held sequence. */
export const LOCK_ORDERED_KEY = `SELECT c.last_seq::text AS "lastSeq", c.blocked_by::text AS "blockedBy",
    c.blocked_seq::text AS "blockedSeq",
    (SELECT min(seq)::text FROM ordering_waiting o
      WHERE o.handler = c.handler AND o.producer = c.producer AND o.key = c.key) AS "firstWaiting"
  FROM ordering_cursor c WHERE c.handler = $1 AND c.producer = $2 AND c.key = $3 FOR UPDATE`

/** Moves the cursor of handler $1, producer $2, key $3 to sequence $4 and unblocks (and starts) it. */
export const SKIP_ORDERED_KEY = `UPDATE ordering_cursor SET last_seq = $4::bigint, blocked_by = NULL,
    blocked_seq = NULL, blocked_since = NULL, blocked_reason = NULL, settling_since = NULL
  WHERE handler = $1 AND producer = $2 AND key = $3`
