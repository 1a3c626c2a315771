import http from 'node:http'

/** What one request returned: status (0 when no response came), parsed JSON body, headers, time in ms. */
export interface HttpResult {
  status: number
  body: unknown
  retryAfter: string | undefined
  ms: number
  /** The transport error when no response came (refused, reset, timed out). */
  error?: string
}

/**
 * A keep-alive HTTP/1.1 client on node:http: at most `maxSockets` connections to each host, reused
 * across requests, so the harness opens no connection storm and pays no handshake per order.
 */
export function createHttpClient(maxSockets: number, timeoutMs = 30_000) {
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets })

  const request = (method: string, url: string, body?: unknown): Promise<HttpResult> =>
    new Promise((resolve) => {
      const started = performance.now()
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = http.request(
        url,
        {
          method,
          agent,
          timeout: timeoutMs,
          headers: payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {},
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let parsed: unknown = text
            if ((res.headers['content-type'] ?? '').includes('json')) {
              try {
                parsed = JSON.parse(text)
              } catch {
                parsed = text
              }
            }
            const retryAfter = res.headers['retry-after']
            resolve({
              status: res.statusCode ?? 0,
              body: parsed,
              retryAfter,
              ms: performance.now() - started,
            })
          })
          res.on('error', (error) =>
            resolve({ status: 0, body: undefined, retryAfter: undefined, ms: 0, error: error.message }),
          )
        },
      )
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
      req.on('error', (error) =>
        resolve({
          status: 0,
          body: undefined,
          retryAfter: undefined,
          ms: performance.now() - started,
          error: error.message,
        }),
      )
      req.end(payload)
    })

  return {
    request,
    /** GET returning the body as text (for /metrics), or undefined when the request failed. */
    async text(url: string): Promise<string | undefined> {
      const result = await request('GET', url)
      return result.status === 200 && typeof result.body === 'string' ? result.body : undefined
    },
    close: () => agent.destroy(),
  }
}

export type HttpClient = ReturnType<typeof createHttpClient>
