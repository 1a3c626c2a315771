/**
 * JSON Schemas of the admin routes' answers, for the OpenAPI document of the host (they describe;
 * the plugin serialises with JSON.stringify). Shapes as in README.md, "Routes".
 */

const str = { type: 'string' } as const
const nullableStr = { type: 'string', nullable: true } as const
const int = { type: 'integer' } as const
const nullableInt = { type: 'integer', nullable: true } as const
const dateTime = { type: 'string', format: 'date-time' } as const
const nullableDateTime = { type: 'string', format: 'date-time', nullable: true } as const

const object = (properties: Record<string, object>) =>
  ({ type: 'object', required: Object.keys(properties), properties }) as const
const list = (items: object) => ({ type: 'array', items }) as const

/** `{ error, message, details: [{ path, issue }] }`: every 4xx body of the host's error handler. */
const clientError = object({
  error: str,
  message: str,
  details: list(object({ path: str, issue: str })),
})

/** `{ error, message, requestId }`: a 5xx body. */
const serverError = object({ error: str, message: str, requestId: str })

const outboxRecord = object({
  id: str,
  type: str,
  routingKey: str,
  aggregateId: nullableStr,
  correlationId: nullableStr,
  causationId: nullableStr,
  traceId: nullableStr,
  state: { type: 'string', enum: ['pending', 'published', 'parked'] },
  attempts: int,
  lastError: nullableStr,
  occurredAt: dateTime,
  publishedAt: nullableDateTime,
  failedAt: nullableDateTime,
  payload: {},
  headers: { type: 'object', additionalProperties: { type: 'string' } },
})

const deadLetter = object({
  messageId: nullableStr,
  type: nullableStr,
  routingKey: nullableStr,
  correlationId: nullableStr,
  causationId: nullableStr,
  aggregateId: nullableStr,
  reason: nullableStr,
  handler: nullableStr,
  deadLetteredAt: nullableDateTime,
  payload: {},
})

const writeResult = (key: 'messageId' | 'id', outcomes: string[]) =>
  object({
    dryRun: { type: 'boolean' },
    actionId: nullableStr,
    results: list(object({ [key]: str, outcome: { type: 'string', enum: outcomes } })),
  })

const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, status >= 500 ? serverError : clientError]))

const bulkJob = object({
  id: str,
  action: str,
  filter: { type: 'object' },
  state: { type: 'string', enum: ['running', 'stopping', 'stopped', 'done', 'failed'] },
  limit: int,
  ratePerSecond: int,
  matched: nullableInt,
  done: int,
  failed: int,
  startedAt: dateTime,
  endedAt: nullableDateTime,
  actionId: nullableStr,
  error: nullableStr,
})

const jobAnswer = object({ service: str, job: bulkJob })

/** The `response` map of each admin route, by operationId. */
export const ADMIN_RESPONSES = {
  messagingSummary: {
    200: object({
      service: str,
      at: dateTime,
      broker: { type: 'string', enum: ['connected', 'down'] },
      outbox: object({
        pending: int,
        parked: int,
        oldestPendingAt: nullableDateTime,
        oldestPendingAgeMs: nullableInt,
      }),
      queues: list(
        object({
          handler: str,
          queue: str,
          ready: nullableInt,
          consumers: nullableInt,
          deadLetterQueue: str,
          deadLettered: nullableInt,
        }),
      ),
    }),
    ...errors(500),
  },
  messagingRecords: { 200: object({ service: str, outbox: list(outboxRecord) }), ...errors(400, 500) },
  findRecords: { 200: object({ service: str, outbox: list(outboxRecord) }), ...errors(400, 500) },
  messagingInbox: {
    200: object({
      service: str,
      inbox: list(object({ messageId: str, handler: str, receivedAt: dateTime })),
    }),
    ...errors(400, 500),
  },
  listDeadLetters: {
    200: object({
      service: str,
      queues: list(object({ queue: str, handler: str, count: int, messages: list(deadLetter) })),
    }),
    ...errors(400, 404, 503),
  },
  listParked: { 200: object({ service: str, rows: list(outboxRecord) }), ...errors(400, 500) },
  listAdminActions: {
    200: object({
      service: str,
      actions: list(
        object({ id: str, at: dateTime, actor: str, action: str, target: str, ids: list(str), detail: {} }),
      ),
    }),
    ...errors(400, 500),
  },
  requeueDeadLetters: {
    200: writeResult('messageId', ['requeued', 'would-requeue', 'not-found']),
    ...errors(400, 401, 403, 404, 409, 415, 503),
  },
  discardDeadLetters: {
    200: writeResult('messageId', ['discarded', 'would-discard', 'not-found']),
    ...errors(400, 401, 403, 404, 415, 503),
  },
  listStuckKeys: {
    200: object({
      service: str,
      keys: list(
        object({
          handler: str,
          producer: str,
          key: str,
          state: { type: 'string', enum: ['blocked', 'gap'] },
          lastSeq: str,
          blockedBy: nullableStr,
          blockedSeq: nullableStr,
          blockedSince: nullableDateTime,
          reason: nullableStr,
          waiting: int,
          firstWaiting: nullableStr,
          waitingSince: nullableDateTime,
        }),
      ),
    }),
    ...errors(400, 500),
  },
  skipOrderedKey: {
    200: object({
      dryRun: { type: 'boolean' },
      actionId: nullableStr,
      results: list(
        object({
          outcome: { type: 'string', enum: ['skipped', 'would-skip', 'not-stuck', 'not-found'] },
          from: nullableStr,
          to: nullableStr,
          skipped: nullableStr,
        }),
      ),
    }),
    ...errors(400, 401, 403, 404, 415, 500),
  },
  startBulk: {
    200: object({
      service: str,
      dryRun: { type: 'boolean' },
      kind: { type: 'string', enum: ['requeue', 'discard', 'retry'] },
      filter: { type: 'object' },
      matched: int,
      scanned: int,
      complete: { type: 'boolean' },
      sample: list({ anyOf: [deadLetter, outboxRecord] }),
    }),
    202: object({ service: str, dryRun: { type: 'boolean' }, job: bulkJob }),
    ...errors(400, 401, 403, 404, 409, 415, 503),
  },
  getBulk: { 200: jobAnswer, ...errors(400, 404) },
  stopBulk: { 200: jobAnswer, ...errors(400, 401, 403, 404, 415) },
  retryParked: {
    200: writeResult('id', ['retried', 'would-retry', 'not-parked']),
    ...errors(400, 401, 403, 415, 500),
  },
} as const
