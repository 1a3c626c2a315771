import { SERVICES, type ServiceName } from '@saga/contracts'
import type { Upstream } from '../upstream.js'

/** Whether each service could be read, and why not (`GET /api/actions`, `GET /api/ordered-keys`). */
export type SourceReads = Record<string, { ok: boolean; reason: string | null }>

/**
 * GETs `path` of every service at once and takes `pick(body)` of each, every row with its
 * `service`. A service that does not answer 2xx adds no rows and is named in `sources` with the
 * reason. Never throws.
 */
export async function readEveryService<B, T extends object>(
  upstream: Upstream,
  path: string,
  pick: (body: B) => T[],
): Promise<{ rows: (T & { service: ServiceName })[]; sources: SourceReads }> {
  const read = await Promise.all(
    SERVICES.map(async (service: ServiceName) => {
      try {
        const rows = pick(await upstream.json<B>(service, path)).map((row) => ({ ...row, service }))
        return { service, rows, reason: null }
      } catch (error) {
        return { service, rows: [], reason: (error as Error).message }
      }
    }),
  )
  return {
    rows: read.flatMap((r) => r.rows),
    sources: Object.fromEntries(read.map((r) => [r.service, { ok: r.reason === null, reason: r.reason }])),
  }
}
