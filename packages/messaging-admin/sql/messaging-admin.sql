-- @saga/messaging-admin: the audit table of admin writes (recordAdminAction, messagingAdminPlugin's
-- POST routes, a service's own admin routes): one row per write that was not a dry run.
-- Idempotent: apply it again at every start, or copy it into a migration.
-- Needs @saga/messaging/sql/messaging.sql first (the admin reads outbox_message and inbox_message).
CREATE TABLE IF NOT EXISTS messaging_admin_action (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      timestamptz(3) NOT NULL DEFAULT now(),
  actor   text NOT NULL,
  action  text NOT NULL,
  target  text NOT NULL,
  ids     text[] NOT NULL DEFAULT '{}',
  detail  jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX IF NOT EXISTS messaging_admin_action_at_idx ON messaging_admin_action (at);
