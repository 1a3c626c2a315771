import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const launcher = fileURLToPath(new URL('../bin/order.js', import.meta.url))
const root = fileURLToPath(new URL('../../../', import.meta.url))

describe('npm run order (bin/order.js)', () => {
  it('when the CLI is not built, then it says to build first and exits 1 without a stack trace', async () => {
    const unbuilt = mkdtempSync(join(tmpdir(), 'saga-unbuilt-'))
    try {
      cpSync(launcher, join(unbuilt, 'bin', 'order.js'))
      const failure = await run('node', [join(unbuilt, 'bin', 'order.js'), 'help']).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      )
      expect(failure?.code).toBe(1)
      expect(failure?.stderr).toContain('not built yet')
      expect(failure?.stderr).toContain('npm run build')
      expect(failure?.stderr).not.toMatch(/\n\s+at /)
    } finally {
      rmSync(unbuilt, { recursive: true, force: true })
    }
  })

  it('when the CLI is built, then the launcher runs it with the arguments given', async () => {
    const { stdout } = await run('node', [launcher, 'help'])
    expect(stdout).toContain('usage: npm run order -- <command>')
  })

  // npm prints `> node packages/fleet/bin/order.js cancel ***`: it redacts anything shaped like a
  // UUID in the lines it writes itself (old npm tokens were UUIDs). The script gets the id as typed.
  it('when an order id goes through npm run order, then the CLI receives it intact (npm only masks it in its own banner), and -s drops the banner', async () => {
    const paths: string[] = []
    const server = createServer((request, response) => {
      paths.push(`${request.method} ${request.url}`)
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ status: 'CANCELLED', cancellationReason: 'customer_requested' }))
    }).listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    try {
      const id = randomUUID()
      const env = { ...process.env, ORDER_SERVICE_URL: `http://127.0.0.1:${port}` }
      const plain = await run('npm', ['run', 'order', '--', 'cancel', id], { cwd: root, env })
      expect(paths).toEqual([`POST /orders/${id}/cancel`])
      expect(plain.stdout).toContain(`order ${id}: CANCELLED (customer_requested)`)

      const silent = await run('npm', ['run', '-s', 'order', '--', 'cancel', id], { cwd: root, env })
      expect(paths).toHaveLength(2)
      expect(paths[1]).toBe(`POST /orders/${id}/cancel`)
      expect(silent.stdout).toBe(`order ${id}: CANCELLED (customer_requested)\n`)
      expect(`${silent.stdout}${silent.stderr}`).not.toContain('***')
    } finally {
      server.close()
    }
  })
})
