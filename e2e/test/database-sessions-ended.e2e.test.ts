import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoneService, type LoneService } from '../src/lone-service.js'
import { eventually } from '../src/wait.js'

// An administrator ends a running service's database sessions (pg_terminate_backend, 57P01): each
// lost connection is one log line (at warn, what an operator reads) with the error's message and
// code, and no line at any level holds anything of the driver's client object (user, database,
// host, backend pid, cancel key).
interface LogLine {
  level: string
  msg: string
  err?: Record<string, unknown>
  [key: string]: unknown
}

const parse = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)

describe('a service whose database sessions are terminated', () => {
  let s: LoneService

  beforeAll(async () => {
    s = await startLoneService('order', { LOG_LEVEL: 'debug' })
    await s.proc.waitReady()
  })

  afterAll(async () => {
    await s?.close()
  })

  it('when every session of its pool is terminated, then one line per connection names the code and message, and no line holds the driver client', async () => {
    // Several pooled connections at once, then idle: what a service between two bursts has.
    await Promise.all(Array.from({ length: 8 }, () => fetch(`${s.proc.url}/orders?limit=5`)))
    const { rows: sessions } = await s.db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'order-service'`,
    )
    expect(sessions.length).toBeGreaterThan(1)
    const before = s.output().length
    await s.db.pool.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [
      sessions.map((r) => r.pid),
    ])
    // What an operator sees at LOG_LEVEL=warn: a line naming the terminated session, as `err` (the
    // service's own lines) or as `reason` and `code` (messaging's).
    const lost = () =>
      parse(s.output().slice(before)).filter(
        (line) =>
          line.level !== 'debug' &&
          (line.err?.message ?? line.reason) === 'terminating connection due to administrator command',
      )
    await eventually(
      `a line for each of the ${sessions.length} sessions`,
      () => lost().length >= sessions.length,
      // Only ends a wait for lines that never come: a loaded machine writes them seconds late.
      { timeoutMs: 30_000 },
    )
    // The service reconnects by itself; by then every line about the loss has been written.
    await s.proc.waitReady(30_000)

    const lines = lost()
    console.info(
      `${sessions.length} sessions terminated: ${lines.length} lines ${JSON.stringify(lines.map((l) => `${l.level} ${l.msg}`))}`,
    )
    for (const line of lines) {
      expect({ msg: line.msg, code: line.err?.code ?? line.code }).toEqual({ msg: line.msg, code: '57P01' })
      if (line.err)
        expect(line.err).toEqual({
          type: 'DatabaseError',
          message: 'terminating connection due to administrator command',
          code: '57P01',
        })
    }
    expect(lines).toHaveLength(sessions.length)

    const text = s.output()
    for (const internal of ['"client"', 'processID', 'secretKey', 'connectionParameters', '_queryQueue'])
      expect({ internal, found: text.includes(internal) }).toEqual({ internal, found: false })
    for (const pid of sessions.map((r) => String(r.pid)))
      expect({ pid, found: new RegExp(`\\b${pid}\\b`).test(text.slice(before)) }).toEqual({
        pid,
        found: false,
      })
    const longest = Math.max(...text.split('\n').map((line) => line.length))
    expect(longest).toBeLessThan(2_000)
  })
})
