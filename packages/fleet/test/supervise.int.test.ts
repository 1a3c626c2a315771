import { freePort } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { Supervisor, type ServiceSpec } from '../src/supervise.js'

// The supervisor's rules on stand-in services (a few lines of node each: an HTTP server whose
// /health/ready answers 200), so each rule is checked in seconds; start.int.test.ts runs the fleet.
/** A stand-in service: ready at once; on SIGTERM exits 0 after 50 ms, or ignores it (`stubborn`). */
const standIn = async (name: string, opts: { stubborn?: boolean } = {}): Promise<ServiceSpec> => {
  const port = await freePort()
  const onTerm = opts.stubborn ? '() => {}' : '() => setTimeout(() => process.exit(0), 50)'
  const script = `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1');
process.on('SIGTERM', ${onTerm}); console.log('${name} listening')`
  return {
    name,
    command: process.execPath,
    args: ['-e', script],
    cwd: process.cwd(),
    env: { PATH: process.env.PATH },
    readyUrl: `http://127.0.0.1:${port}/health/ready`,
  }
}

const supervise = (services: ServiceSpec[], stopTimeoutMs = 10_000) => {
  const lines: string[] = []
  const supervisor = new Supervisor({
    services,
    say: (line) => lines.push(`[fleet] ${line}`),
    write: (line) => lines.push(line),
    colour: false,
    restartHint: 'kill -USR2 1234',
    stopTimeoutMs,
    pollMs: 50,
  })
  const waitFor = async (pattern: RegExp, ms = 10_000): Promise<string> => {
    const deadline = Date.now() + ms
    for (;;) {
      const line = lines.find((l) => pattern.test(l))
      if (line) return line
      if (Date.now() > deadline) throw new Error(`no ${String(pattern)}:\n${lines.join('\n')}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return { supervisor, lines, waitFor }
}

describe('the npm start supervisor', () => {
  it('when every service drains on the signal, then done is 0 and their output is prefixed with padded names', async () => {
    const { supervisor, lines, waitFor } = supervise([await standIn('a'), await standIn('bbbb')])
    supervisor.start()
    await waitFor(/all services ready/)
    supervisor.stop('SIGTERM')
    expect(await supervisor.done).toBe(0)
    expect(lines).toContain('[a   ] a listening')
    expect(lines).toContain('[bbbb] bbbb listening')
    expect(lines).toContain('[fleet] a exited (code 0)')
  })

  it('when a service ignores the signal past the stop timeout, then it is killed and done is 1', async () => {
    const { supervisor, waitFor } = supervise(
      [await standIn('a'), await standIn('b', { stubborn: true })],
      1_000,
    )
    supervisor.start()
    await waitFor(/all services ready/)
    supervisor.stop('SIGTERM')
    expect(await supervisor.done).toBe(1)
    await waitFor(/\[fleet\] b still running 1000 ms after SIGTERM; killing/)
    await waitFor(/\[fleet\] b exited \(signal SIGKILL\)/)
  })

  it('when a stop signal arrives twice (terminal and npm), then it is forwarded once', async () => {
    const { supervisor, lines, waitFor } = supervise([await standIn('a')])
    supervisor.start()
    await waitFor(/all services ready/)
    supervisor.stop('SIGINT')
    supervisor.stop('SIGINT')
    expect(await supervisor.done).toBe(0)
    expect(lines.filter((l) => l.includes('to drain and exit'))).toHaveLength(1)
  })

  it('when every service dies after it was ready, then the last exit ends the fleet with 1', async () => {
    const { supervisor, waitFor } = supervise([await standIn('a'), await standIn('b')])
    supervisor.start()
    await waitFor(/all services ready/)
    const pids = supervisor.pids()
    process.kill(pids.a!, 'SIGKILL')
    await waitFor(
      /\[fleet\] a exited \(signal SIGKILL\) after it was ready; b keeps running .*kill -USR2 1234/,
    )
    process.kill(pids.b!, 'SIGKILL')
    expect(await supervisor.done).toBe(1)
    await waitFor(/\[fleet\] b exited \(signal SIGKILL\) after it was ready; no service is left running/)
  })
})
