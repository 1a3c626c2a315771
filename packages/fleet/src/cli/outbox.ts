import pg from 'pg'
import { SERVICES, type CliSettings, type ServiceName } from './settings.js'

/** One outbox row as the CLI shows it. */
export interface OutboxRow {
  service: ServiceName
  id: string
  type: string
  routingKey: string
  /** When the row was written (`occurred_at`, the database's clock). */
  occurredAt: Date
  /**
   * When the fact happened as its event says: CloudEvents `time`, i.e. the producer's `occurredAt`
   * kept in the row's headers, else `occurred_at` (what the relay publishes, see messaging's envelope).
   */
  happenedAt: Date
  attempts: number
  lastError: string | null
  publishedAt: Date | null
  failedAt: Date | null
  state: 'published' | 'pending' | 'parked'
}

const COLUMNS = `id, type, routing_key, occurred_at, headers->>'occurredAt' AS time_header, attempts, last_error,
  published_at, failed_at`

interface RawRow {
  id: string
  type: string
  routing_key: string
  occurred_at: Date
  time_header: string | null
  attempts: number
  last_error: string | null
  published_at: Date | null
  failed_at: Date | null
}

function toRow(service: ServiceName, r: RawRow): OutboxRow {
  const time = r.time_header ? new Date(r.time_header) : undefined
  return {
    service,
    id: r.id,
    type: r.type,
    routingKey: r.routing_key,
    occurredAt: r.occurred_at,
    happenedAt: time && !Number.isNaN(time.getTime()) ? time : r.occurred_at,
    attempts: r.attempts,
    lastError: r.last_error,
    publishedAt: r.published_at,
    failedAt: r.failed_at,
    state: r.published_at ? 'published' : r.failed_at ? 'parked' : 'pending',
  }
}

/**
 * Runs `fn` against each service database in turn. A database that cannot be reached is reported
 * in `unreachable` rather than failing the command: the tool is for diagnosing a broken fleet.
 */
export async function eachDatabase<T>(
  settings: CliSettings,
  fn: (service: ServiceName, client: pg.Client) => Promise<T[]>,
): Promise<{ rows: T[]; unreachable: { service: ServiceName; error: string }[] }> {
  const rows: T[] = []
  const unreachable: { service: ServiceName; error: string }[] = []
  for (const service of SERVICES) {
    const client = new pg.Client({
      connectionString: settings.services[service].databaseUrl,
      connectionTimeoutMillis: 3_000,
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      rows.push(...(await fn(service, client)))
    } catch (error) {
      unreachable.push({ service, error: error instanceof Error ? error.message : String(error) })
    } finally {
      await client.end().catch(() => undefined)
    }
  }
  return { rows, unreachable }
}

/**
 * Every outbox row of one order in the four databases, in the order the facts happened (`happenedAt`,
 * the event time `follow` prints too; the database's `occurred_at` breaks ties). Rows are matched on
 * `aggregate_id` and on the payload's `orderId` (every event of the chain carries it). Published rows
 * are deleted after the services' retention (OUTBOX_RETENTION_MS), so old history may be gone.
 */
export async function outboxRowsOfOrder(settings: CliSettings, orderId: string) {
  const result = await eachDatabase(settings, async (service, client) => {
    const { rows } = await client.query<RawRow>(
      `SELECT ${COLUMNS} FROM outbox_message WHERE aggregate_id = $1 OR payload->>'orderId' = $1`,
      [orderId],
    )
    return rows.map((r) => toRow(service, r))
  })
  result.rows.sort(
    (a, b) =>
      a.happenedAt.getTime() - b.happenedAt.getTime() || a.occurredAt.getTime() - b.occurredAt.getTime(),
  )
  return result
}
