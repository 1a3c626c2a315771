import { randomUUID } from 'node:crypto'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import addFormats from 'ajv-formats'
import { OpenAPIBackend } from 'openapi-backend'

/**
 * The errors Redocly's `recommended` rules find in `document` (an OpenAPI 3 document), one line
 * each (`security-defined: ... at #/paths/...`); empty when it has none. Warnings are not listed.
 */
export async function redoclyErrors(document: object): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: 'openapi.json',
    config,
  })
  return problems
    .filter((problem) => problem.severity === 'error')
    .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`)
}

/**
 * `document` loaded by openapi-backend in strict mode (it throws on a document OpenAPI 3.0 does not
 * allow, e.g. `nullable` without a `type`), with the standard formats (ajv-formats).
 * @throws Error naming what the strict loader refused
 */
export async function strictApi(document: object): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as never,
    strict: true,
    customizeAjv: (ajv) => {
      addFormats.default(ajv)
      return ajv
    },
  })
  await api.init()
  return api
}

/** A request as light-my-request takes it. */
export interface ApiRequest {
  method: string
  url: string
  payload?: unknown
  headers?: Record<string, string>
}

/** What the check needs of an app: `inject` with any method, a body and headers. */
export interface RequestableApp {
  inject(request: ApiRequest): Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>
}

/** One answer checked against the document: which operation, its status, and what is wrong. */
export interface CheckedAnswer {
  operationId: string
  statusCode: number
  /** The answer's body as sent. */
  body: string
  problems: string[]
}

/**
 * Sends `request` to `app` and checks the answer against `api`'s document: the request matches an
 * operation, the status is one it documents (or `default`), and a JSON body is what that status's
 * schema allows (openapi-backend's response validation).
 */
export async function checkAnswer(
  api: OpenAPIBackend,
  app: RequestableApp,
  request: ApiRequest,
): Promise<CheckedAnswer> {
  const { statusCode, body, headers } = await app.inject(request)
  const [path, query] = request.url.split('?')
  const operation = api.matchOperation({
    method: request.method,
    path: path ?? '/',
    query: query ?? '',
    headers: {},
  })
  const answer = (operationId: string, problems: string[]) => ({ operationId, statusCode, body, problems })
  if (!operation) return answer('?', [`no operation for ${request.method} ${path}`])
  const operationId = operation.operationId ?? `${request.method} ${path}`
  const documented = Object.keys(operation.responses ?? {})
  if (!documented.includes(String(statusCode)) && !documented.includes('default'))
    return answer(operationId, [
      `status ${statusCode} is not documented (${documented.join(', ')}): ${body.slice(0, 200)}`,
    ])
  const contentType = headers['content-type']
  if (typeof contentType !== 'string' || !contentType.includes('json')) return answer(operationId, [])
  const result = api.validateResponse(JSON.parse(body) as unknown, operation, statusCode)
  return answer(
    operationId,
    (result.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`),
  )
}

/**
 * A request for every operation of `api`'s document that takes no knowledge of the service's data:
 * path parameters are fresh UUIDs, a request body is `{}`, no credentials. Each is answered with
 * something the document must describe (a 404, a 400, a 401), so no route is left unchecked.
 */
export function blindRequests(api: OpenAPIBackend): ApiRequest[] {
  return api.getOperations().map((operation) => {
    const url = operation.path.replace(/\{[^}]+\}/g, () => randomUUID())
    const method = operation.method.toUpperCase()
    const withBody = ['POST', 'PUT', 'PATCH'].includes(method)
    return withBody
      ? { method, url, payload: {}, headers: { 'content-type': 'application/json' } }
      : { method, url }
  })
}
