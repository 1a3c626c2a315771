import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** The header a request id arrives and leaves in, so callers can correlate with the logs. */
export const REQUEST_ID_HEADER = 'x-request-id'

const SAFE_ID = /^[\w.:-]{1,128}$/

/** Takes a well-formed incoming `x-request-id`, otherwise makes a UUID. */
export function genReqId(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER]
  return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID()
}
