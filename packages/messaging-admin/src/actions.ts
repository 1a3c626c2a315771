import { INSERT_ADMIN_ACTION, RECENT_ADMIN_ACTIONS } from './sql.js'

/**
 * What the admin runs its statements on: a pg `Pool`, `PoolClient` or `Client` (a transaction's
 * client, so a record commits with the change it records).
 */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>
}

/** An admin write to record: who, what, on what, which ids, and whatever else explains it. */
export interface AdminActionInput {
  /** Who acted (the `x-admin-actor` header, e.g. `alice@ops`). */
  actor: string
  /** What was done, e.g. `dead-letters.requeue`, `parked.retry`, `order.cancel`. */
  action: string
  /** What it was done on, e.g. a queue name, `outbox_message`, `order`. */
  target: string
  /** The message, row or order ids it concerned. */
  ids: readonly string[]
  /** Anything else worth keeping (outcomes, counts); stored as jsonb. Default `{}`. */
  detail?: Record<string, unknown>
}

/** A recorded admin action; `at` ISO 8601, `id` the row's bigint as a string. */
export interface AdminAction {
  id: string
  at: string
  actor: string
  action: string
  target: string
  ids: string[]
  detail: Record<string, unknown>
}

/**
 * Records one admin action in table `messaging_admin_action`
 * (`@saga/messaging-admin/sql/messaging-admin.sql`) on `client` (a pool, or the client of the
 * transaction that made the change, so both commit or neither). Dry runs are not recorded: call it
 * only for a write that changed something. Returns the new row's id.
 * @throws the database's error (e.g. the table is missing: the service lacks the migration)
 */
export async function recordAdminAction(client: Queryable, input: AdminActionInput): Promise<string> {
  const { rows } = await client.query(INSERT_ADMIN_ACTION, [
    input.actor,
    input.action,
    input.target,
    [...input.ids],
    JSON.stringify(input.detail ?? {}),
  ])
  return (rows[0] as { id: string }).id
}

/** The newest `limit` admin actions, newest first. */
export async function recentAdminActions(db: Queryable, limit: number): Promise<AdminAction[]> {
  const { rows } = await db.query(RECENT_ADMIN_ACTIONS, [limit])
  return (rows as (Omit<AdminAction, 'at'> & { at: Date })[]).map((row) => ({
    ...row,
    at: row.at.toISOString(),
  }))
}
