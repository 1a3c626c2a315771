import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './database.js'

/** One millisecond before New York's 2026 spring-forward (07:00 UTC): a shifted write would cross the DST edge. */
export const AT = new Date('2026-03-08T06:59:59.999Z')
/** An instant in New York's daylight time, written there as `2026-11-01 01:30:00.123-04`. */
export const LATER = new Date('2026-11-01T05:30:00.123Z')

/** What `useShiftedTimeZones` gives each test. */
export interface ShiftedTimeZones<A> {
  db: TestDatabase
  /** The service's app, booted by `boot` on `db.url`. */
  app: A
  /** Another client of the database, its sessions in the database's default zone (New York). */
  other: pg.Pool
  /**
   * The instant stored in `table.column` of the row whose `key` is `id`, as epoch ms, read by `other`
   * (so in a New York session). @throws when the row is missing
   */
  storedMs(table: string, column: string, key: string, id: string): Promise<number>
}

/**
 * The messaging tables of a service's Prisma client (every service has the same two models, from
 * packages/messaging/sql/messaging.sql), as far as `useShiftedTimeZones`' messaging check uses them.
 */
export interface MessagingModels {
  inboxMessage: {
    create(args: { data: { messageId: string; handler: string; receivedAt: Date } }): PromiseLike<unknown>
    findFirstOrThrow(args: { where: { messageId: string } }): PromiseLike<{ receivedAt: Date }>
  }
  outboxMessage: {
    create(args: {
      data: {
        id: string
        type: string
        routingKey: string
        payload: Record<string, never>
        occurredAt: Date
        availableAt: Date
        publishedAt: Date
        failedAt: Date
      }
    }): PromiseLike<unknown>
    findUniqueOrThrow(args: {
      where: { id: string }
    }): PromiseLike<{ occurredAt: Date; availableAt: Date; publishedAt: Date | null; failedAt: Date | null }>
  }
}

/** Options of `useShiftedTimeZones`. */
export interface ShiftedTimeZonesOptions<A> {
  /**
   * The service's Prisma client in the booted app: adds the check that every timestamp of the inbox
   * and outbox tables, written and read through it, is the instant given.
   */
  messaging?: (app: A) => MessagingModels
}

/**
 * The fixture of a service's time-zone test: a fresh database whose default zone is
 * America/New_York, the process in Asia/Kolkata (+05:30), and the service's app booted on it by
 * `boot(url)`. Call it inside a `describe`: it registers the set-up and tear-down (restoring `TZ`,
 * closing the app, dropping the database) and the check that the service's migrations leave no
 * timestamp without time zone (and, with `options.messaging`, the inbox and outbox check). Returns a
 * getter for the fixture, valid inside the tests.
 */
export function useShiftedTimeZones<A extends { close(): Promise<unknown> }>(
  prefix: string,
  boot: (url: string) => Promise<A>,
  options: ShiftedTimeZonesOptions<A> = {},
): () => ShiftedTimeZones<A> {
  let fixture: ShiftedTimeZones<A> | undefined
  const processZone = process.env.TZ

  beforeAll(async () => {
    process.env.TZ = 'Asia/Kolkata'
    const zoned = await createNewYorkDatabase(prefix)
    fixture = { ...zoned, app: await boot(zoned.db.url) }
  })

  afterAll(async () => {
    await fixture?.app.close()
    await fixture?.other.end()
    await fixture?.db.drop()
    if (processZone === undefined) delete process.env.TZ
    else process.env.TZ = processZone
  })

  const get = (): ShiftedTimeZones<A> => {
    if (fixture === undefined) throw new Error('useShiftedTimeZones: the fixture is only set inside tests')
    return fixture
  }

  it('when the migrations are applied, then no column of the service is a timestamp without time zone', async () => {
    const { rows } = await get().other.query<{ column: string }>(
      `SELECT table_name || '.' || column_name AS column FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type IN ('timestamp without time zone', 'time without time zone')`,
    )
    expect(rows).toEqual([])
  })

  const messaging = options.messaging
  if (messaging !== undefined) itKeepsMessagingInstants(get, messaging)

  return get
}

/**
 * A per-run database whose default zone is America/New_York, a second pool on it (`other`, max 2
 * connections) and `storedMs` reading instants through that pool.
 */
async function createNewYorkDatabase(prefix: string): Promise<Omit<ShiftedTimeZones<never>, 'app'>> {
  const db = await createTestDatabase({ prefix })
  await db.pool.query(`ALTER DATABASE "${db.name}" SET timezone TO 'America/New_York'`)
  const other = new pg.Pool({ connectionString: db.url, max: 2 })
  const storedMs = async (table: string, column: string, key: string, id: string): Promise<number> => {
    const { rows } = await other.query<{ ms: number; zone: string }>(
      `SELECT (extract(epoch FROM ${column}) * 1000)::float8 AS ms, current_setting('TimeZone') AS zone
         FROM ${table} WHERE ${key} = $1`,
      [id],
    )
    const row = rows[0]
    if (row === undefined) throw new Error(`no row of ${table} with ${key} = ${id}`)
    expect(row.zone).toBe('America/New_York')
    return row.ms
  }
  return { db, other, storedMs }
}

/**
 * Registers the check that every timestamp of the inbox and outbox tables, written and read through
 * the Prisma client `messaging(app)`, is the instant given, in Prisma and in the database.
 */
function itKeepsMessagingInstants<A>(
  get: () => ShiftedTimeZones<A>,
  messaging: (app: A) => MessagingModels,
): void {
  it('when inbox and outbox rows are written through Prisma, then every timestamp is stored and read back as given', async () => {
    const fixture = get()
    const prisma = messaging(fixture.app)
    const storedMs = (table: string, column: string, key: string, id: string) =>
      fixture.storedMs(table, column, key, id)
    const messageId = randomUUID()
    await prisma.inboxMessage.create({ data: { messageId, handler: 'h', receivedAt: AT } })
    await prisma.outboxMessage.create({
      data: {
        id: messageId,
        type: 't',
        routingKey: 'k',
        payload: {},
        occurredAt: AT,
        availableAt: LATER,
        publishedAt: LATER,
        failedAt: AT,
      },
    })
    const inbox = await prisma.inboxMessage.findFirstOrThrow({ where: { messageId } })
    expect(inbox.receivedAt).toEqual(AT)
    const outbox = await prisma.outboxMessage.findUniqueOrThrow({ where: { id: messageId } })
    expect([outbox.occurredAt, outbox.availableAt, outbox.publishedAt, outbox.failedAt]).toEqual([
      AT,
      LATER,
      LATER,
      AT,
    ])
    expect(await storedMs('inbox_message', 'received_at', 'message_id', messageId)).toBe(AT.getTime())
    expect(await storedMs('outbox_message', 'occurred_at', 'id', messageId)).toBe(AT.getTime())
    expect(await storedMs('outbox_message', 'available_at', 'id', messageId)).toBe(LATER.getTime())
    expect(await storedMs('outbox_message', 'published_at', 'id', messageId)).toBe(LATER.getTime())
    expect(await storedMs('outbox_message', 'failed_at', 'id', messageId)).toBe(AT.getTime())
  })
}
