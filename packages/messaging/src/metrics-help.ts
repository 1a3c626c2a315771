/**
 * The Prometheus HELP text of each series the `metrics()` snapshot yields when exported the way
 * service-kit does (numeric leaves as snake_case under `saga_messaging_`, `*Ms` as `*_seconds`,
 * per-handler counters labelled `handler`; see README, "Observability"). Kept beside the snapshot so
 * a new figure gets its sentence where it is added.
 */
export const MESSAGING_METRIC_HELP: Readonly<Record<string, string>> = {
  saga_messaging_broker_up: 'Whether every AMQP connection the service needs is open (1) or not (0).',
  saga_messaging_broker_blocked:
    'Whether the broker blocks a connection of the service (1, connection.blocked: see /health for the reason) or not (0).',
  saga_messaging_relay_pending:
    'Outbox rows waiting to be published to the broker. Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_oldest_pending_age_seconds:
    'Age of the oldest outbox row waiting to be published, in seconds (0 when none waits). Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_parked:
    'Outbox rows parked after using up their publish attempts. Per database: every instance of the service reports the same value, so aggregate with max by (job), never sum.',
  saga_messaging_relay_published_total: 'Outbox rows the broker confirmed since the process started.',
  saga_messaging_relay_failed_total: 'Outbox publish attempts that failed since the process started.',
  saga_messaging_relay_parked_total: 'Outbox rows parked since the process started.',
  saga_messaging_consumer_handled_total: 'Deliveries whose handler transaction committed, by handler.',
  saga_messaging_consumer_duplicates_total:
    'Deliveries the inbox had already seen, acknowledged without running the handler, by handler.',
  saga_messaging_consumer_retried_total: 'Handler failures that were scheduled for a retry, by handler.',
  saga_messaging_consumer_dead_lettered_total:
    'Messages moved to the dead-letter queue (poison or out of attempts), by handler.',
  saga_messaging_consumer_in_flight:
    'Deliveries being worked on now (running or waiting for a slot or a retry), by handler.',
  saga_messaging_consumer_batches_total:
    'Handler transactions that took two or more deliveries of the queue and committed, by handler.',
  saga_messaging_consumer_batch_fallbacks_total:
    'Such batch transactions rolled back (a handler or the commit failed), whose deliveries were then handled one by one, by handler.',
  saga_messaging_recorder_recorded_total:
    'Messages a batch recorder wrote (or found already written), by handler (the recorder name).',
  saga_messaging_recorder_batches_total: 'Statements a batch recorder ran, one per batch, by handler.',
  saga_messaging_recorder_split_total:
    'Batches the database refused and a recorder retried one message at a time, by handler.',
  saga_messaging_recorder_dead_lettered_total:
    'Messages a batch recorder dead-lettered (invalid, or refused alone by the database), by handler.',
  saga_messaging_consuming:
    'Whether this instance consumes every one of its handler queues (1) or not (0). Per instance: min by (job) finds one that stopped.',
}
