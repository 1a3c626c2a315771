import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKeepAliveLoad } from '../src/keep-alive-load.js'
import { startLoneService, type LoneService } from '../src/lone-service.js'
import { SERVICES, type ServiceName } from '../src/run.js'
import { eventually } from '../src/wait.js'

// SIGTERM to a service under keep-alive load: it stops accepting first (a connect after that is
// refused, which is how a client or a proxy learns to go elsewhere), answers every request that
// reaches it with `Connection: close`, closes idle keep-alive connections only once they have been
// idle a while, and never resets a connection it accepted.
// Paths each service answers without a body: a probe, a read that reaches the database (a 404 or an
// empty list), and the metrics page.
const PATHS: Record<ServiceName, string[]> = {
  order: ['/health/live', `/orders/${randomUUID()}`, '/orders?limit=5'],
  payment: ['/health/live', `/payments?orderId=${randomUUID()}`, '/metrics'],
  inventory: ['/health/live', '/stock/NO-SUCH-SKU', '/metrics'],
  shipment: ['/health/live', `/shipments?orderId=${randomUUID()}`, '/metrics'],
}

describe.each(SERVICES)('graceful shutdown of %s under keep-alive load', (service) => {
  let s: LoneService

  beforeAll(async () => {
    s = await startLoneService(service)
    await s.proc.waitReady()
  })

  afterAll(async () => {
    await s?.close()
  })

  it('when 20 keep-alive clients loop requests and the service gets SIGTERM, then no accepted connection is reset and every request that reached it is answered', async () => {
    const load = startKeepAliveLoad({
      baseUrl: s.proc.url,
      paths: PATHS[service],
      clients: 20,
    })
    const idle = await idleKeepAliveConnection(s.proc.port)
    await eventually('500 answers before the signal', () => load.answered >= 500, { timeoutMs: 60_000 })
    const answeredBefore = load.answered
    const signalled = performance.now()
    await s.proc.stop(30_000)
    const exitMs = Math.round(performance.now() - signalled)
    // Clients keep trying after the exit: those connects are refused, never reset. The first refusal
    // is the signal that the load has met the closed port (30 s only ends a wait for one that never comes).
    await eventually('a connect refused after the exit', () => load.refused > 0, { timeoutMs: 30_000 })
    const tally = await load.stop()

    const statuses = Object.fromEntries(tally.statuses)
    console.info(
      `${service}: SIGTERM under keep-alive load: exited in ${exitMs} ms; ${load.answered - answeredBefore} answers after the signal ` +
        `(${tally.closeAnswers} with Connection: close), statuses ${JSON.stringify(statuses)}, ` +
        `${tally.refused} connects refused, ${tally.resets.length} resets ${JSON.stringify(tally.resets.slice(0, 5))}`,
    )
    expect(tally.resets).toEqual([])
    expect(tally.refused).toBeGreaterThan(0)
    expect(tally.closeAnswers).toBeGreaterThan(0)
    expect(Object.keys(statuses).filter((status) => Number(status) >= 500)).toEqual([])
    expect(s.output()).toContain('"msg":"closed"')
    // The connection that sat idle was closed with a FIN (end of stream), not reset.
    expect(await idle.ended).toBe('end')
  })
})

/**
 * A raw keep-alive connection that sends one request, reads its answer, then stays idle; `ended`
 * resolves with how the server closed it: `end` (FIN) or the error's code.
 */
async function idleKeepAliveConnection(port: number): Promise<{ ended: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1')
  const ended = new Promise<string>((resolve) => {
    socket.once('end', () => resolve('end'))
    socket.once('error', (error: Error & { code?: string }) => resolve(error.code ?? error.message))
  })
  let received = ''
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString()
      if (received.includes('\r\n\r\n')) resolve()
    })
    socket.write(`GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
  })
  expect(received).toMatch(/^HTTP\/1\.1 200/)
  return { ended }
}
