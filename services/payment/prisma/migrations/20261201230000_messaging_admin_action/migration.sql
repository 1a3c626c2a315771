-- The admin surface (messagingAdminPlugin): parked rows by when they parked, and every admin write
-- that was not a dry run. Copy into a new migration (prisma/migrations/<ts>_messaging_admin_action).
CREATE INDEX outbox_message_parked_idx ON outbox_message (failed_at)
  WHERE failed_at IS NOT NULL AND published_at IS NULL;

CREATE TABLE messaging_admin_action (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      timestamptz(3) NOT NULL DEFAULT now(),
  actor   text NOT NULL,
  action  text NOT NULL,
  target  text NOT NULL,
  ids     text[] NOT NULL DEFAULT '{}',
  detail  jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX messaging_admin_action_at_idx ON messaging_admin_action (at);
