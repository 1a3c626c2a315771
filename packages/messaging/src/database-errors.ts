import type { Logger } from './types.js'

// What "the database cannot serve this now" looks like, from each layer a statement goes through.
// Sources: https://www.postgresql.org/docs/current/errcodes-appendix.html,
// https://www.prisma.io/docs/orm/reference/error-reference, and what @prisma/adapter-pg 7 and pg 8
// threw against a real server (restart, terminated backends, a cut link, lock and statement timeouts).

/**
 * Prisma: P1001 cannot reach the server, P1002 reached but timed out, P1008 operation timed out,
 * P1017 server closed the connection, P2024 no pool connection in time, P2028 transaction API error
 * (no transaction within maxWait, or one that expired while the database was slow).
 */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028'])

/**
 * SQLSTATE: 53300 too_many_connections, 55P03 lock_not_available (lock_timeout), 57014
 * query_canceled (statement_timeout), 57P01 admin_shutdown (also what a restarting server sends its
 * sessions), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down), 57P05
 * idle_session_timeout, 25P03 idle_in_transaction_session_timeout. Class 08 (connection exception)
 * is matched as a class.
 */
const SQLSTATES = new Set(['53300', '55P03', '57014', '57P01', '57P02', '57P03', '57P05', '25P03'])

/** Kinds @prisma/adapter-pg gives socket and connection failures (in `meta.driverAdapterError.cause`). */
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
])

/** Node socket errors (errno codes) on the way to the server. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/** pg and pg-pool failures that carry no code, only a message (lower-cased here). */
const MESSAGES = [
  'connection terminated unexpectedly',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'client has encountered a connection error and is not queryable',
  'cannot use a pool after calling end on the pool',
  'query read timeout',
]

/**
 * SQLSTATEs that mean "unavailable" only with a given message, because the code alone is also used
 * for bugs: 55000 object_not_in_prerequisite_state is what a connection gets from a database whose
 * connections are switched off (`ALTER DATABASE … ALLOW_CONNECTIONS false`, maintenance), and also
 * what `currval` before `nextval` gets.
 */
const REFUSALS: ReadonlyArray<{ code: string; text: string }> = [
  { code: '55000', text: 'is not currently accepting connections' },
]

interface ErrorLike {
  code?: unknown
  originalCode?: unknown
  kind?: unknown
  message?: unknown
  cause?: unknown
  meta?: { code?: unknown; driverAdapterError?: unknown } | undefined
}

/** SQLSTATE: 40001 serialization_failure, 40P01 deadlock_detected: the transaction may simply be run again. */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01'])

/** `e`'s string codes: its own, pg's original one and Prisma's `meta.code`. */
const codesOf = (e: ErrorLike): string[] =>
  [e.code, e.originalCode, e.meta?.code].filter((code): code is string => typeof code === 'string')

const hasCode = (e: ErrorLike, codes: ReadonlySet<string>): boolean =>
  codesOf(e).some((code) => codes.has(code))

const UNAVAILABLE_CODES = new Set([...PRISMA_CODES, ...SQLSTATES, ...SOCKET_CODES])

function matches(e: ErrorLike): boolean {
  if (hasCode(e, UNAVAILABLE_CODES) || codesOf(e).some((code) => /^08[0-9A-Z]{3}$/.test(code))) return true
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true
  const text = typeof e.message === 'string' ? e.message.toLowerCase() : ''
  if (REFUSALS.some((r) => codesOf(e).includes(r.code) && text.includes(r.text))) return true
  return MESSAGES.some((m) => text.startsWith(m) || text.includes(`: ${m}`))
}

/**
 * Whether `error` means the database cannot serve the request now: unreachable, connection closed,
 * reset or refused (also by a database whose connections are switched off), sessions terminated,
 * the server starting or shutting down, too many connections, no pool connection or transaction
 * slot in time, or a lock or statement past the session limits. Such a request may succeed a moment
 * later, so the error handler answers 503 with `Retry-After`, never 500. Looks through the error's
 * chain (`someInChain`). Constraint violations, bad SQL and other bugs are not matched.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someInChain(error, matches)
}

/**
 * Whether a transaction that failed with `error` may succeed when simply run again, through no
 * fault of its own: `isDatabaseUnavailable`, or a serialization failure or deadlock the database
 * chose it as the victim of (SQLSTATE 40001, 40P01). The inbox retries such failures without
 * spending the message's attempts (see `ConsumerOptions.transientRetryMaxMs`).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  return someInChain(error, (e) => matches(e) || hasCode(e, RETRYABLE_SQLSTATES))
}

/**
 * Whether `error` is PostgreSQL refusing a statement's values rather than failing to serve it:
 * SQLSTATE class 22 (data exception: a NUL character in text or jsonb, a value out of range) or 54
 * (program limit exceeded: an index row too large), or `SqlValueError` (a value that cannot be
 * inlined into SQL text). Run again with the same values, the statement fails again. Looks through
 * the error's chain (`someInChain`).
 */
export function isRejectedValue(error: unknown): boolean {
  return someInChain(
    error,
    (e) =>
      (e as { name?: unknown }).name === 'SqlValueError' ||
      codesOf(e).some((code) => /^(22|54)[0-9A-Z]{3}$/.test(code)),
  )
}

/** SQLSTATEs that end the session itself: 57P01 admin_shutdown (pg_terminate_backend, a restart), 57P02
 * crash_shutdown, 57P05 idle_session_timeout, 25P03 idle_in_transaction_session_timeout. */
const SESSION_ENDED_SQLSTATES = new Set(['57P01', '57P02', '57P05', '25P03'])

/**
 * Whether `error` says the session the statement ran on has ended (terminated, timed out, or its
 * socket closed under it), not a statement failed on a live session: one lost connection, which a
 * background reader reports where an operator looks (`reportBackgroundFailure`). Looks through the
 * error's chain (`someInChain`).
 */
export function isSessionEnded(error: unknown): boolean {
  return someInChain(error, (e) => {
    if (hasCode(e, SESSION_ENDED_SQLSTATES)) return true
    const text = typeof e.message === 'string' ? e.message.toLowerCase() : ''
    return text.startsWith('connection terminated')
  })
}

/**
 * Logs the failure of a background statement (a stats read, retention, a NOTIFY) that the next
 * round repeats: at warn with the error's message and code when it ended the session, which is the
 * one line for that lost connection (`pool.on('error')` reports only the idle ones), else at debug,
 * since a database that is down is already reported by the health checks and the relay.
 */
export function reportBackgroundFailure(log: Logger | undefined, error: unknown, what: string): void {
  if (!log) return
  if (isSessionEnded(error)) {
    const { message, code } = error as { message?: unknown; code?: unknown }
    log.warn({ reason: message, code }, `database connection lost during ${what}`)
  } else log.debug({ err: error }, `${what} failed`)
}

/** Whether `test` holds for `error`, its `cause` chain or Prisma's `meta.driverAdapterError`, at most 12 deep. */
function someInChain(error: unknown, test: (e: ErrorLike) => boolean): boolean {
  const queue: unknown[] = [error]
  for (let seen = 0; queue.length > 0 && seen < 12; seen += 1) {
    const current = queue.shift()
    if (!current || typeof current !== 'object') continue
    const e = current as ErrorLike
    if (test(e)) return true
    queue.push(e.cause, e.meta?.driverAdapterError)
  }
  return false
}
