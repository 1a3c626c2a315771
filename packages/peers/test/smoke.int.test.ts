import { POSTGRES_URL } from '@saga/testkit'
import { createHttpClient } from '@saga/load/dist/http.js'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { PEERS } from '../src/contestants.js'
import { databaseUrl } from '../src/databases.js'
import { measureStep } from '../src/measure.js'
import { createTreeMeter } from '../src/procs.js'

const databasesNamed = async (prefix: string): Promise<string[]> => {
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [prefix],
    )
    return rows.map((r) => r.datname)
  } finally {
    await admin.end()
  }
}

describe('npm run bench:peers (smoke: pg-boss, 20 orders)', () => {
  it('when 20 orders of the failure mix go through the pg-boss peer, then each ends as its rules say, the invariants hold (and report a unit taken twice and a refund undone), and its database is gone after', async () => {
    const prefix = `peers_smoke_${process.pid}_`
    const http = createHttpClient(16)
    const target = await PEERS.pgboss!.start(prefix, POSTGRES_URL)
    try {
      const step = await measureStep({
        http,
        target,
        meter: createTreeMeter(target.roots),
        postgresUrl: POSTGRES_URL,
        rate: 20,
        seconds: 1,
        firstOrder: 0,
        drainTimeoutMs: 60_000,
      })
      expect({ accepted: step.accepted, completed: step.completed }).toEqual({ accepted: 20, completed: 20 })
      const verdict = await target.check()
      expect(verdict).toEqual({
        ok: true,
        problems: [],
        outcomes: {
          CONFIRMED: 17,
          'CANCELLED card_declined': 1,
          'CANCELLED out_of_stock': 1,
          'CANCELLED unsupported_country': 1,
        },
      })
      // The same checker reports a unit taken twice and a refund never made.
      const db = new pg.Client({ connectionString: databaseUrl(POSTGRES_URL, target.databases[0]!) })
      await db.connect()
      await db.query(`UPDATE stock SET available = available - 1 WHERE sku = 'LOAD-TEST-001'`)
      await db.query(`UPDATE payments SET status = 'captured' WHERE status = 'refunded'`)
      await db.end()
      const broken = await target.check()
      expect(broken.ok).toBe(false)
      expect(broken.problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^stock LOAD-TEST-001: 9999982 available, 9999983 expected/),
          expect.stringMatching(/^money: /),
        ]),
      )
    } finally {
      await target.stop()
      http.close()
    }
    expect(await databasesNamed(prefix)).toEqual([])
  })
})
