import { createTestDatabase, useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { createHousekeeping } from '../src/outbox/housekeeping.js'
import { idleRelayStats } from '../src/outbox/stats.js'
import { MESSAGING_SQL, recordingLogger } from './relay-fixture.js'

// A session that ends under a background statement is a lost connection like an idle one, and is
// reported the same way: one warn line with the server's message and code. The pool reports only
// its idle connections, so without this a stats read in flight when an administrator ends the
// service's sessions left that connection unreported (seen in database-sessions-ended.e2e.test.ts).
describe('relay housekeeping: a statement whose session ends', () => {
  const db = useFixture(() => createTestDatabase({ prefix: 'housekeeping', sqlFiles: [MESSAGING_SQL] }))

  /** Starts housekeeping (its first stats read runs at once) while the outbox is locked; returns its waiting backend. */
  const startBehindLock = async () => {
    const holder = await db.pool.connect()
    await holder.query('BEGIN; LOCK TABLE outbox_message IN ACCESS EXCLUSIVE MODE')
    const logger = recordingLogger()
    const housekeeping = createHousekeeping({
      pool: db.pool,
      logger,
      stats: idleRelayStats(),
      statsIntervalMs: 60_000,
      retentionIntervalMs: 0,
      retention: { retentionMs: 60_000, inboxRetentionMs: 60_000 },
      vacuumAfterRows: 0,
    })
    housekeeping.start()
    let waiting: number | undefined
    for (let tries = 0; waiting === undefined && tries < 100; tries += 1) {
      const { rows } = await db.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%outbox_message%'`,
      )
      waiting = rows[0]?.pid
      if (waiting === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    if (waiting === undefined) throw new Error('the stats read never waited for the lock')
    const release = async () => {
      await holder.query('ROLLBACK')
      holder.release()
    }
    return { logger, housekeeping, waiting, release }
  }

  it('when the stats read in flight has its session terminated, then one warn line gives the message and code 57P01', async () => {
    const { logger, housekeeping, waiting, release } = await startBehindLock()
    await db.pool.query('SELECT pg_terminate_backend($1)', [waiting])
    await housekeeping.stop()
    await release()

    expect(logger.entries.map(({ level, msg, obj }) => ({ level, msg, obj }))).toEqual([
      {
        level: 'warn',
        msg: 'database connection lost during outbox stats read',
        obj: { reason: 'terminating connection due to administrator command', code: '57P01' },
      },
    ])
  })

  it('when the stats read gives up on its lock timeout on a live session, then it is a debug line only', async () => {
    const { logger, housekeeping, release } = await startBehindLock()
    await housekeeping.stop()
    await release()

    expect(logger.entries.map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: 'debug', msg: 'outbox stats read failed' },
    ])
    expect(logger.entries[0]?.obj).toMatchObject({ err: { code: '55P03' } })
  })
})
