import { randomUUID } from 'node:crypto'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { dbPlugin } from '../src/plugins/db.js'

// Issue 14.1 (services/order/test/time-zone.int.test.ts has the full story): the database's zone is
// New York and the process's Kolkata; what the service stores and reads must not move.
const processZone = process.env.TZ
process.env.TZ = 'Asia/Kolkata'
// One millisecond before New York's 2026 spring-forward (07:00 UTC): a shift would cross the DST edge.
const AT = new Date('2026-03-08T06:59:59.999Z')
const LATER = new Date('2026-11-01T05:30:00.123Z')

let db: TestDatabase
let app: FastifyInstance
/** Another client of the database, in the database's default zone (New York). */
let other: pg.Pool

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'inventory_tz' })
  await db.pool.query(`ALTER DATABASE "${db.name}" SET timezone TO 'America/New_York'`)
  other = new pg.Pool({ connectionString: db.url, max: 2 })
  app = Fastify({ logger: false })
  await app.register(dbPlugin, { config: loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent' }) })
  await app.ready()
})

afterAll(async () => {
  await app?.close()
  await other?.end()
  await db?.drop()
  process.env.TZ = processZone
})

/** The stored instant as epoch ms, read by another client whose session is in New York. */
async function storedMs(table: string, column: string, key: string, id: string): Promise<number> {
  const { rows } = await other.query<{ ms: number; zone: string }>(
    `SELECT (extract(epoch FROM ${column}) * 1000)::float8 AS ms, current_setting('TimeZone') AS zone
     FROM ${table} WHERE ${key} = $1`,
    [id],
  )
  expect(rows[0]?.zone).toBe('America/New_York')
  return rows[0]!.ms
}

describe('inventory timestamps under a New York database and a Kolkata process', () => {
  it('when every timestamp column is written through Prisma, then the same instant is stored and read back', async () => {
    const sku = `SKU-${randomUUID()}`
    const orderId = randomUUID()
    await app.prisma.stock.create({ data: { sku, available: 5, reserved: 1, updatedAt: AT } })
    await app.prisma.reservation.create({
      data: { orderId, lineNo: 1, sku, quantity: 1, status: 'RELEASED', reservedAt: AT, releasedAt: LATER },
    })
    const read = await app.prisma.stock.findUniqueOrThrow({ where: { sku }, include: { reservations: true } })
    expect([read.updatedAt, read.reservations[0]?.reservedAt, read.reservations[0]?.releasedAt]).toEqual([
      AT,
      AT,
      LATER,
    ])
    expect(await storedMs('stock', 'updated_at', 'sku', sku)).toBe(AT.getTime())
    expect(await storedMs('reservation', 'released_at', 'order_id', orderId)).toBe(LATER.getTime())
    const messageId = randomUUID()
    await app.prisma.inboxMessage.create({ data: { messageId, handler: 'h', receivedAt: AT } })
    await app.prisma.outboxMessage.create({
      data: { id: messageId, type: 't', routingKey: 'k', payload: {}, occurredAt: AT, availableAt: LATER },
    })
    const inbox = await app.prisma.inboxMessage.findFirstOrThrow({ where: { messageId } })
    expect(inbox.receivedAt).toEqual(AT)
    expect(await storedMs('outbox_message', 'occurred_at', 'id', messageId)).toBe(AT.getTime())
    expect(await storedMs('outbox_message', 'available_at', 'id', messageId)).toBe(LATER.getTime())
  })

  it('when a row was written by another client in New York time, then Prisma reads the instant it holds', async () => {
    const sku = `SKU-${randomUUID()}`
    await other.query(
      `INSERT INTO stock (sku, available, updated_at) VALUES ($1, 1, '2026-11-01 01:30:00.123-04')`,
      [sku],
    )
    const read = await app.prisma.stock.findUniqueOrThrow({ where: { sku } })
    expect(read.updatedAt).toEqual(LATER)
  })

  it('when the migrations are applied, then no column of the service is a timestamp without time zone', async () => {
    const { rows } = await other.query<{ column: string }>(
      `SELECT table_name || '.' || column_name AS column FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type IN ('timestamp without time zone', 'time without time zone')`,
    )
    expect(rows).toEqual([])
  })
})
