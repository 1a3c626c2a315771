/** An error as a log line holds it: what it is and what went wrong, nothing of the object that raised it. */
export interface LoggedError {
  /** The constructor's name: `DatabaseError`, `TypeError`, `Error`, ... */
  type: string
  message: string
  /** SQLSTATE (`57P01`), system (`ECONNRESET`), AMQP reply (320) or framework (`FST_ERR_...`) code. */
  code?: string | number
  /** An HTTP status the error carries (fastify's and our own errors). */
  statusCode?: number
  /** Only for an unexpected error: one without a `code` (a bug rather than a fault of the world). */
  stack?: string
  cause?: LoggedError | string
  /** An AggregateError's errors (connect to `localhost` tries ::1 and 127.0.0.1), the first five. */
  errors?: (LoggedError | string)[]
}

/** Longest message or stack kept, characters: one error must not make a line of kilobytes. */
const MAX_TEXT = 2_000
/** How deep `cause` chains are followed. */
const MAX_DEPTH = 3

/**
 * `scheme://user:password@` in free text, so the password can be masked: up to the last `@` before
 * a space, as a password may hold an unencoded `@` (masking a host too is the safe side).
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*):\S*@/gi

/**
 * `text` with the password of every `scheme://user:password@` in it replaced by `***`, and cut to
 * `MAX_TEXT` characters. Example: `masked('connect amqp://u:pw@h:5672 failed')` is
 * `'connect amqp://u:***@h:5672 failed'`.
 */
export function masked(text: string): string {
  const cut = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text
  return cut.replace(URL_CREDENTIALS, '$1:***@')
}

const codeOf = (error: Error): string | number | undefined => {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' || typeof code === 'number' ? code : undefined
}

/** A thrown value that is not an Error but says what went wrong (`{ message, code }`). */
const errorLike = (value: unknown): value is { message: string } =>
  typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string'

function serialize(value: unknown, depth: number): LoggedError | string {
  if (!(value instanceof Error)) {
    if (!errorLike(value)) return masked(String(value))
    const code = codeOf(value as Error)
    return { type: 'Object', message: masked(value.message), ...(code === undefined ? {} : { code }) }
  }
  const logged: LoggedError = { type: value.constructor.name || value.name, message: masked(value.message) }
  const code = codeOf(value)
  if (code !== undefined) logged.code = code
  const statusCode = (value as { statusCode?: unknown }).statusCode
  if (typeof statusCode === 'number') logged.statusCode = statusCode
  if (code === undefined && value.stack) logged.stack = masked(value.stack)
  if (value.cause !== undefined && depth < MAX_DEPTH) logged.cause = serialize(value.cause, depth + 1)
  if (value instanceof AggregateError && depth < MAX_DEPTH) {
    logged.errors = (value.errors as unknown[]).slice(0, 5).map((inner) => serialize(inner, depth + 1))
  }
  return logged
}

/**
 * The pino serializer of the `err` and `error` keys of every service log line: an Error becomes a
 * `LoggedError` (type, message, code, statusCode, the stack of an unexpected error, cause and
 * AggregateError's errors the same way); a thrown non-Error as its message and code when it has a
 * message, else as its string. Everything else an
 * error object carries is left out: pg attaches the whole client to an idle connection's error
 * (user, database, host, backend pid, cancel key: 4-5 KB a line), Node's ERR_INVALID_URL carries the
 * URL it could not parse (password included), amqplib's carry the connection. A password in a
 * `scheme://user:password@` inside a message or stack is masked (`masked`).
 */
export function serializeError(value: unknown): unknown {
  if (value === undefined || value === null || typeof value === 'string') return value
  return serialize(value, 0)
}
