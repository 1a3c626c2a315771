import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStubFleet, type StubFleet } from './support/stubs.js'

// The built server (dist/server.js) as a process, its log captured: turbo builds before testing.
const SERVER = fileURLToPath(new URL('../dist/server.js', import.meta.url))
const TOKEN = `token-${randomUUID()}`

let fleet: StubFleet
let server: ChildProcess
let url = ''
let log = ''

beforeAll(async () => {
  fleet = await startStubFleet()
  server = spawn(process.execPath, [SERVER], {
    env: {
      ...fleet.env,
      PATH: process.env.PATH,
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'trace',
      LOG_FORMAT: 'json',
      CONSOLE_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()))
  server.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()))
  // Only ends a server that never listens: a loaded machine can take many seconds to start a process.
  const deadline = Date.now() + 45_000
  while (url === '' && Date.now() < deadline) {
    url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1] ?? ''
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  expect(url, log).not.toBe('')
})

afterAll(async () => {
  if (server.exitCode === null) {
    server.kill('SIGTERM')
    await once(server, 'exit')
  }
  await fleet.close()
})

describe('the console process', () => {
  it('when a person signs in, acts and fails a sign-in at trace level, then the admin token is in no log line', async () => {
    const json = { origin: url, 'content-type': 'application/json' }
    const signIn = await fetch(`${url}/api/session`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ actor: 'ada', token: TOKEN }),
    })
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const action = await fetch(`${url}/api/actions`, {
      method: 'POST',
      headers: { ...json, cookie },
      body: JSON.stringify({ kind: 'retry', service: 'payment', ids: ['x'], dryRun: true }),
    })
    expect(action.status).toBe(200)
    const wrong = await fetch(`${url}/api/session`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ actor: 'ada', token: `${TOKEN}x` }),
    })
    expect(wrong.status).toBe(401)
    // The stub got the token: the console did send it, only to the service.
    const sent = fleet.stubs.payment.received.find((r) => r.path === '/admin/messaging/parked/retry')
    expect(sent?.headers.authorization).toBe(`Bearer ${TOKEN}`)
    server.kill('SIGTERM')
    await once(server, 'exit')
    expect(log).toContain('"msg":"console action"')
    expect(log).toContain('"msg":"closed"')
    expect(log).not.toContain(TOKEN)
  })
})
