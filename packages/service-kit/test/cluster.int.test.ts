import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { freePort } from '@saga/testkit'
import { expect, it } from 'vitest'

const SERVER = fileURLToPath(new URL('./support/cluster-server.ts', import.meta.url))

it('when INSTANCES is 2, then two worker processes answer on the one port, and SIGTERM to the primary closes both apps and exits 0', async () => {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    env: { ...process.env, PORT: String(port), INSTANCES: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  try {
    // Until both workers have answered (new connection per request: the primary deals them round-robin).
    const pids = new Set<number>()
    // Three node processes start here; on a busy 2-core machine that took over 30 s.
    const deadline = Date.now() + 120_000
    while (pids.size < 2 && Date.now() < deadline) {
      const response = await fetch(`http://127.0.0.1:${port}/pid`, {
        headers: { connection: 'close' },
      }).catch(() => undefined)
      if (response?.ok) pids.add(((await response.json()) as { pid: number }).pid)
      else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(pids.size).toBe(2)
    expect(pids.has(child.pid!)).toBe(false)

    child.kill('SIGTERM')
    const [code] = (await once(child, 'exit')) as [number | null]
    expect(code).toBe(0)
    expect(output).toContain('starting 2 processes sharing one port')
    for (const pid of pids) expect(output).toContain(`closed ${pid}`)
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
  }
}, 180_000)
