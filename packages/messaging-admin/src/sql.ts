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
