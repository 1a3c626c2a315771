import http from 'node:http'
import { delay } from './wait.js'

/** One request that failed without an HTTP answer. */
export interface FailedRequest {
  /** The error's code (`ECONNRESET`, `ECONNREFUSED`, `EPIPE`, ...) or its message. */
  code: string
  /** Whether the request went out on a keep-alive connection that had carried an earlier one. */
  reusedSocket: boolean
  /** ms since the load started. */
  atMs: number
}

/** What the clients saw, counted once the load stopped. */
export interface KeepAliveTally {
  /** Answers by HTTP status. */
  statuses: Map<number, number>
  /** Answers that carried `Connection: close`. */
  closeAnswers: number
  /** Connects refused (`ECONNREFUSED`): the listener was closed, nothing was accepted. */
  refused: number
  /** Requests that got no answer on a connection that was accepted: resets, hang-ups, broken pipes. */
  resets: FailedRequest[]
}

/** A running keep-alive load; `stop()` ends the loops and returns the tally. */
export interface KeepAliveLoad {
  /** Answers received so far (any status). */
  readonly answered: number
  /** Connects refused so far (`ECONNREFUSED`). */
  readonly refused: number
  stop(): Promise<KeepAliveTally>
}

/** Options of `startKeepAliveLoad`. */
export interface KeepAliveLoadOptions {
  /** e.g. `http://127.0.0.1:3001`. */
  baseUrl: string
  /** Paths requested in turn, e.g. `['/health/live', '/orders/<uuid>']`. */
  paths: string[]
  /** Concurrent clients, each one keep-alive connection (default 20). */
  clients?: number
}

/**
 * `clients` loops, each with its own keep-alive agent (one socket), sending GET requests back to back
 * until `stop()`: what a pool of keep-alive HTTP clients does to a service. A refused connect is
 * counted and retried after 20 ms (the service's listener is closed); any other failure without an
 * answer is a reset and is recorded with its code and whether its connection was reused.
 */
export function startKeepAliveLoad(opts: KeepAliveLoadOptions): KeepAliveLoad {
  const started = performance.now()
  const tally: KeepAliveTally = { statuses: new Map(), closeAnswers: 0, refused: 0, resets: [] }
  let answered = 0
  let running = true

  const once = (agent: http.Agent, path: string): Promise<void> =>
    new Promise((resolve) => {
      const req = http.get(`${opts.baseUrl}${path}`, { agent, timeout: 10_000 }, (res) => {
        res.resume()
        res.on('end', () => {
          answered += 1
          tally.statuses.set(res.statusCode ?? 0, (tally.statuses.get(res.statusCode ?? 0) ?? 0) + 1)
          if (res.headers.connection === 'close') tally.closeAnswers += 1
          resolve()
        })
        res.on('error', (error) => fail(error))
      })
      const fail = (error: Error & { code?: string }) => {
        const code = error.code ?? error.message
        if (code === 'ECONNREFUSED') tally.refused += 1
        else
          tally.resets.push({
            code,
            reusedSocket: req.reusedSocket,
            atMs: Math.round(performance.now() - started),
          })
        resolve(code === 'ECONNREFUSED' ? delay(20) : undefined)
      }
      req.on('timeout', () => req.destroy(new Error('no answer within 10 s')))
      req.on('error', fail)
    })

  const client = async (n: number): Promise<void> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    for (let i = n; running; i += 1) await once(agent, opts.paths[i % opts.paths.length]!)
    agent.destroy()
  }
  const loops = Array.from({ length: opts.clients ?? 20 }, (_, n) => client(n))

  return {
    get answered() {
      return answered
    },
    get refused() {
      return tally.refused
    },
    async stop() {
      running = false
      await Promise.all(loops)
      return tally
    },
  }
}
