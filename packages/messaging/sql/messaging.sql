-- Tables of @saga/messaging: the transactional outbox and the inbox.
-- Copy into the service's first migration (prisma/migrations/<ts>_messaging/migration.sql).
CREATE TABLE outbox_message (
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
CREATE INDEX outbox_message_pending_idx ON outbox_message (available_at, id)
  WHERE published_at IS NULL AND failed_at IS NULL;
CREATE INDEX outbox_message_published_at_idx ON outbox_message (published_at)
  WHERE published_at IS NOT NULL;
CREATE INDEX outbox_message_aggregate_id_idx ON outbox_message (aggregate_id);

CREATE TABLE inbox_message (
  message_id   uuid NOT NULL,
  handler      text NOT NULL,
  received_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, handler)
);
CREATE INDEX inbox_message_received_at_idx ON inbox_message (received_at);

-- The admin surface (messagingAdminPlugin): parked rows by when they parked, and every admin write
-- that was not a dry run. Copy into a new migration (prisma/migrations/<ts>_messaging_admin_action).
CREATE INDEX outbox_message_parked_idx ON outbox_message (failed_at)
  WHERE failed_at IS NOT NULL AND published_at IS NULL;
