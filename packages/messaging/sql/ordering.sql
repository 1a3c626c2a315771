-- Tables of @saga/messaging's per-key order (README, "Per-key order"), apart from messaging.sql:
-- only a service that produces or consumes ordered messages needs them.
--   producer (enqueue with orderingKey, or a contract with ordering: 'per-key'): ordering_sequence.
--   consumer (a handler with ordering: 'per-key'): ordering_cursor and ordering_waiting.
--   admin (@saga/messaging-admin's stuckKeys and skipOrdered): reads and moves the consumer's two.
-- Every statement is guarded (IF NOT EXISTS): applying the file again changes nothing.
-- The producer's last sequence number per routing key and key (the row is locked by the enqueuing
-- transaction until it ends: for one key, sequence order is commit order).
CREATE TABLE IF NOT EXISTS ordering_sequence (
  routing_key  text NOT NULL,
  key          text NOT NULL,
  seq          bigint NOT NULL,
  PRIMARY KEY (routing_key, key)
);
-- Per ordered handler, producer (CloudEvents source) and key: the last sequence handled (or
-- skipped), and the dead-lettered message that blocks the key, if any. A key first seen with a
-- sequence above 1 is settling (settling_since set, last_seq 0): its deliveries are held until the
-- settle window passed, then the cursor starts just below the lowest held one. `held` is true
-- whenever ordering_waiting may have a delivery of the key (set with each hold, cleared under the
-- row's lock when none is left), so a move that finds it false needs no probe of ordering_waiting.
-- `settled_past` is where a settled cursor started (its sequences up to it were never handled here:
-- one that comes later is dead-lettered, not taken for a duplicate).
CREATE TABLE IF NOT EXISTS ordering_cursor (
  handler         text NOT NULL,
  producer        text NOT NULL,
  key             text NOT NULL,
  last_seq        bigint NOT NULL DEFAULT 0,
  blocked_by      uuid,
  blocked_seq     bigint,
  blocked_since   timestamptz(3),
  blocked_reason  text,
  settling_since  timestamptz(3),
  held            boolean NOT NULL DEFAULT true,
  settled_past    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (handler, producer, key)
);
-- Tables made before `held` and `settled_past` existed: their cursors count as holding until their
-- next move checks, and as never settled.
ALTER TABLE ordering_cursor ADD COLUMN IF NOT EXISTS held boolean NOT NULL DEFAULT true;
ALTER TABLE ordering_cursor ADD COLUMN IF NOT EXISTS settled_past bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS ordering_cursor_blocked_idx ON ordering_cursor (handler, blocked_since)
  WHERE blocked_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS ordering_cursor_settling_idx ON ordering_cursor (handler, settling_since)
  WHERE settling_since IS NOT NULL;
-- Deliveries that came before their predecessor was handled, held (acked at the broker) until it
-- is; then a copy is put back into the handler's queue (put_back_at).
CREATE TABLE IF NOT EXISTS ordering_waiting (
  handler      text NOT NULL,
  producer     text NOT NULL,
  key          text NOT NULL,
  seq          bigint NOT NULL,
  message_id   uuid NOT NULL,
  routing_key  text NOT NULL,
  content      bytea NOT NULL,
  properties   jsonb NOT NULL,
  received_at  timestamptz(3) NOT NULL DEFAULT now(),
  put_back_at  timestamptz(3),
  PRIMARY KEY (handler, producer, key, seq)
);
