import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { ensureInfrastructure, INSTALL_COMMAND } from '../src/ensure-infra.js'

const run = promisify(execFile)
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const versions = (() => {
  try {
    return readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b))
  } catch {
    return []
  }
})()

describe('ensureInfrastructure (npm start, npm test)', () => {
  // A cluster of its own on a free port, so the shared server is never stopped.
  it.skipIf(versions.length === 0 || process.getuid?.() !== 0)(
    'when a local PostgreSQL cluster is installed but stopped, then it is started and both servers answer',
    async () => {
      const version = versions.at(-1)!
      const name = `saga${randomBytes(3).toString('hex')}`
      const port = await freePort()
      await run('pg_createcluster', [
        version,
        name,
        '-p',
        String(port),
        '--',
        '--auth-host=trust',
        '--auth-local=trust',
      ])
      try {
        const lines: string[] = []
        const result = await ensureInfrastructure({
          postgresUrl: `postgresql://postgres@127.0.0.1:${port}/postgres`,
          amqpUrl,
          say: (line) => lines.push(line),
        })
        expect(result).toEqual({ ok: true })
        expect(lines).toContain(`starting PostgreSQL ${version}/${name} (pg_ctlcluster)`)
        const { stdout } = await run('pg_lsclusters', ['-h', version, name])
        expect(stdout).toMatch(/online/)
      } finally {
        await run('pg_dropcluster', ['--stop', version, name])
      }
    },
  )

  it('when neither server is installed nor listening, then the message names each address and the one install command', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'saga-nopath-'))
    const path = process.env.PATH
    process.env.PATH = empty
    try {
      const lines: string[] = []
      const result = await ensureInfrastructure({
        postgresUrl: 'postgresql://postgres@127.0.0.1:1/postgres',
        amqpUrl: 'amqp://guest:guest@127.0.0.1:1',
        say: (line) => lines.push(line),
      })
      expect(lines).toEqual([])
      expect(result.ok).toBe(false)
      const message = result.ok ? '' : result.message
      expect(message).toContain('PostgreSQL is not reachable at 127.0.0.1:1')
      expect(message).toContain('RabbitMQ is not reachable at 127.0.0.1:1')
      expect(message).toContain(INSTALL_COMMAND)
    } finally {
      process.env.PATH = path
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
