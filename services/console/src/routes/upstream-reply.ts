import type { ServiceName } from '@saga/contracts'
import { HttpError } from '@saga/service-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { answerReason, UpstreamError, type Answer } from '../upstream.js'

/** A client error body of a service (the one error shape), passed on as it is. */
const isClientErrorBody = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && 'message' in body && 'details' in body

/**
 * The sentence a 502 or 504 says about `service`: `The order service is unreachable (ECONNREFUSED)`,
 * `The order service did not answer within 1500 ms`, `The order service answered HTTP 500: …`.
 * `reason` is the upstream's short reason (`unreachable (…)` or `did not answer within …` when
 * `status` is null, `answerReason`'s `HTTP …` otherwise), which also stands alone as a label
 * elsewhere (`not live: unreachable (ECONNREFUSED)`), so the verb is added here.
 */
export function serviceFailureSentence(service: ServiceName, status: number | null, reason: string): string {
  if (status !== null) return `The ${service} service answered ${reason}`
  if (reason.startsWith('unreachable')) return `The ${service} service is ${reason}`
  return `The ${service} service ${reason}`
}

/**
 * Answers a failed read or write of a service: its 4xx as it is (the same error shape, e.g. an
 * order's 404 or a bad filter's 400), a timeout as 504, anything else (no answer, a 5xx) as 502
 * naming the service and the reason, with the request id like every 5xx.
 */
export function replyUpstreamFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  service: ServiceName,
  status: number | null,
  reason: string,
  body: unknown,
): FastifyReply {
  if (status !== null && status >= 400 && status < 500) {
    if (isClientErrorBody(body)) return reply.code(status).send(body)
    throw new HttpError(status, `${service} service: ${reason}`)
  }
  const timedOut = status === null && reason.startsWith('did not answer')
  const code = timedOut ? 504 : 502
  request.log.warn({ service, status, reason }, 'a service did not answer the console')
  return reply.code(code).send({
    error: timedOut ? 'Gateway Timeout' : 'Bad Gateway',
    message: serviceFailureSentence(service, status, reason),
    requestId: request.id,
  })
}

/** `replyUpstreamFailure` for an `UpstreamError`; rethrows anything else. */
export function replyUpstreamError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
): FastifyReply {
  if (!(error instanceof UpstreamError)) throw error
  const reason = error.message.slice(error.service.length + 2)
  return replyUpstreamFailure(request, reply, error.service, error.status, reason, error.body)
}

/** Passes a service's answer on: a 2xx body as it is, anything else through `replyUpstreamFailure`. */
export function replyAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  service: ServiceName,
  answer: Answer,
): FastifyReply {
  if (answer.kind === 'no-answer')
    return replyUpstreamFailure(request, reply, service, null, answer.reason, undefined)
  if (answer.status >= 200 && answer.status < 300) return reply.code(answer.status).send(answer.body)
  return replyUpstreamFailure(
    request,
    reply,
    service,
    answer.status,
    answerReason(answer.status, answer.body),
    answer.body,
  )
}
