-- Tables of @saga/messaging: the transactional outbox and the inbox.
--
-- Which tables a service needs, by role:
--   producer (enqueue, and the relay that publishes): outbox_message.
--   consumer (handlers, deduplicated in the inbox): inbox_message; and outbox_message too while
--     the relay runs in the process (relay.enabled, the default) or its handlers enqueue
--     follow-ups. A consumer that never enqueues, with relay.enabled: false, needs inbox_message
--     alone (README, "Consumer-only services").
--   batch recorders: neither (they write their own tables).
--   admin (@saga/messaging-admin): reads and repairs both tables; its own table ships in its
--     package's sql/messaging-admin.sql.
--
-- Every statement is guarded (IF NOT EXISTS): applying this file again to a database that has
-- the tables changes nothing. It creates and never alters: a column added in a later version
-- comes with its own statement. Copy it into the service's first migration
-- (prisma/migrations/<ts>_messaging/migration.sql), or run it at start-up.
CREATE TABLE IF NOT EXISTS outbox_message (
  id            uuid PRIMARY KEY,
  type          text NOT NULL,
  routing_key   text NOT NULL,
  payload       jsonb NOT NULL,
  headers       jsonb NOT NULL DEFAULT '{}'::jsonb,
  aggregate_id  text,
  occurred_at   timestamptz(3) NOT NULL DEFAULT now(),
  available_at  timestamptz(3) NOT NULL DEFAULT now(),
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  published_at  timestamptz(3),
  failed_at     timestamptz(3)
);
CREATE INDEX IF NOT EXISTS outbox_message_pending_idx ON outbox_message (available_at, id)
  WHERE published_at IS NULL AND failed_at IS NULL;
CREATE INDEX IF NOT EXISTS outbox_message_published_at_idx ON outbox_message (published_at)
  WHERE published_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS outbox_message_aggregate_id_idx ON outbox_message (aggregate_id);

CREATE TABLE IF NOT EXISTS inbox_message (
  message_id   uuid NOT NULL,
  handler      text NOT NULL,
  received_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, handler)
);
CREATE INDEX IF NOT EXISTS inbox_message_received_at_idx ON inbox_message (received_at);

-- Parked rows by when they parked: the relay's parked count and @saga/messaging-admin's listing.
CREATE INDEX IF NOT EXISTS outbox_message_parked_idx ON outbox_message (failed_at)
  WHERE failed_at IS NOT NULL AND published_at IS NULL;
