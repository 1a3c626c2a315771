import type http from 'node:http'
import net from 'node:net'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** How long a keep-alive connection must have been idle before shutdown closes it, ms. */
export const IDLE_GRACE_MS = 500

/** How often shutdown looks for connections that became closable, ms. */
const SWEEP_INTERVAL_MS = 25

/** One accepted connection: requests in progress on it, and when it last became idle. */
interface ConnectionState {
  inFlight: number
  idleSince: number
  /** When shutdown half-closed it; a client that does not close its side within the grace is cut. */
  endedAt?: number
}

/** Options of `gracefulHttpShutdown`. */
export interface GracefulHttpShutdownOptions {
  /** A keep-alive connection idle at least this long is closed (ms, default `IDLE_GRACE_MS`). */
  idleGraceMs?: number | undefined
}

/**
 * Makes `app.close()` end HTTP service without resetting a connection it accepted. Registered
 * before any other plugin, its `preClose` hook runs first, before messaging drains:
 *
 * 1. Stop accepting. `net.Server#close` closes the listener only; `http.Server#close` would also
 *    destroy every idle keep-alive connection at once (Node 19+), and a client sending its next
 *    request on one in that instant gets a reset instead of an answer. A connect after this point is
 *    refused, which is what tells a client or a proxy to go elsewhere.
 * 2. Every answer from now on carries `Connection: close` (the `onSend` hook), so a connection ends
 *    after the request it is carrying; a request already in progress is answered in full.
 * 3. A connection with no request in progress is closed (FIN, not reset) once it has been idle for
 *    `idleGraceMs`: a client looping requests sends its next one within that time and gets it
 *    answered with `Connection: close`; only a client that really is idle sees its connection end
 *    (and one that does not close its side within another `idleGraceMs` is cut).
 *    The hook resolves when no idle connection is left; fastify's own close then waits for the
 *    connections still answering.
 *
 * fastify's `return503OnClosing` should be off (`createServiceApp` does that): the few requests
 * that arrive on open connections during the drain are served, not answered with fastify's 503.
 * An app that never listened (tests using `inject`) closes as before.
 */
export function gracefulHttpShutdown(app: FastifyInstance, opts: GracefulHttpShutdownOptions = {}): void {
  const idleGraceMs = opts.idleGraceMs ?? IDLE_GRACE_MS
  const server: http.Server = app.server
  const connections = new Map<Socket, ConnectionState>()
  let closing = false

  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0, idleSince: performance.now() })
    socket.once('close', () => connections.delete(socket))
  })
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const state = connections.get(request.socket)
    if (!state) return
    state.inFlight += 1
    response.once('close', () => {
      state.inFlight -= 1
      state.idleSince = performance.now()
    })
  })

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })

  app.addHook('preClose', async () => {
    if (!server.listening) return
    closing = true
    net.Server.prototype.close.call(server)
    app.log.debug({ connections: connections.size }, 'stopped accepting connections')
    for (;;) {
      const now = performance.now()
      let idle = 0
      for (const [socket, state] of connections) {
        if (state.inFlight > 0) continue
        idle += 1
        if (state.endedAt === undefined) {
          if (now - state.idleSince < idleGraceMs) continue
          state.endedAt = now
          socket.end()
        } else if (now - state.endedAt >= idleGraceMs) socket.destroy()
      }
      if (idle === 0) return
      await new Promise((resolve) => setTimeout(resolve, SWEEP_INTERVAL_MS))
    }
  })
}
