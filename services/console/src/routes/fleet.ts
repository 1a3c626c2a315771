import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import type { ServerResponse } from 'node:http'
import type { FleetSnapshot } from '../fleet.js'
import type { Poller } from '../poller.js'

/** Options of `fleetRoutes`. */
export interface FleetRoutesOptions {
  poller: Poller<FleetSnapshot>
  /** How often an idle SSE stream gets a comment line, ms (keeps proxies from closing it). */
  heartbeatMs?: number | undefined
}

/** One `text/event-stream` frame: `event: <name>` and the JSON on one `data:` line. */
export const sseFrame = (event: string, data: unknown): string =>
  `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * GET /api/fleet: the fleet snapshot (at most one poll interval old). GET /api/live: Server-Sent
 * Events, `event: fleet` with each snapshot, to every tab from the one poller (the first stream
 * starts it, the last one to close stops it). Streams are ended when the app closes.
 */
export const fleetRoutes: FastifyPluginCallbackZod<FleetRoutesOptions> = (
  app,
  { poller, heartbeatMs },
  done,
) => {
  const streams = new Set<ServerResponse>()
  app.addHook('preClose', (next) => {
    for (const stream of streams) stream.end()
    next()
  })

  app.get('/api/fleet', { schema: { hide: true } }, async () => poller.current())

  app.get('/api/live', { schema: { hide: true } }, (request, reply) => {
    reply.hijack()
    const stream = reply.raw
    stream.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    })
    stream.write('retry: 3000\n\n')
    streams.add(stream)
    const unsubscribe = poller.subscribe((snapshot) => stream.write(sseFrame('fleet', snapshot)))
    const heartbeat = setInterval(() => stream.write(': ping\n\n'), heartbeatMs ?? 15_000)
    request.raw.socket.setNoDelay(true)
    stream.once('close', () => {
      clearInterval(heartbeat)
      unsubscribe()
      streams.delete(stream)
    })
  })
  done()
}
