import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { freePort } from '@saga/testkit'
import { expect, it } from 'vitest'

const SUPERVISOR = fileURLToPath(new URL('./support/supervisor.ts', import.meta.url))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

it('when the supervisor is killed with SIGKILL, then the service it ran stops by itself within seconds and frees its port', async () => {
  const port = await freePort()
  const supervisor = spawn(process.execPath, ['--import', 'tsx', SUPERVISOR], {
    env: { ...process.env, PORT: String(port), INSTANCES: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let service: number | undefined
  try {
    const [first] = (await once(supervisor.stdout, 'data')) as [Buffer]
    service = Number(first.toString().trim())
    const deadline = Date.now() + 60_000
    let answered = false
    while (!answered && Date.now() < deadline) {
      answered = (await fetch(`http://127.0.0.1:${port}/pid`).catch(() => undefined))?.ok === true
      if (!answered) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(answered).toBe(true)

    supervisor.kill('SIGKILL')
    await once(supervisor, 'exit')
    const gone = Date.now() + 15_000
    while (alive(service) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(alive(service)).toBe(false)
    expect(await fetch(`http://127.0.0.1:${port}/pid`).catch(() => 'refused')).toBe('refused')
  } finally {
    if (supervisor.exitCode === null) supervisor.kill('SIGKILL')
    if (service !== undefined && alive(service)) process.kill(service, 'SIGKILL')
  }
})
