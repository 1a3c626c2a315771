import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operationsOf, typecheckHeyApiTypes, typecheckOpenApiClient } from './openapi.js'
import {
  blindRequests,
  checkAnswer,
  redoclyErrors,
  strictApi,
  type ApiRequest,
  type RequestableApp,
} from './openapi-strict.js'
import { startServiceUnderTest, type InjectableApp, type ServiceUnderTest } from './service-under-test.js'

/** What `describeApiDocument` checks a service's OpenAPI document against. */
export interface ApiDocumentExpectations {
  /** The checked-in copy, an absolute path (docs/openapi/<service>.json); `vitest run -u` rewrites it. */
  documentFile: string
  /** A module using a client generated from the document (see `typecheckOpenApiClient`); must type-check. */
  usage: string
  /** A wrong use (a missing field, a wrong type) and a fragment of the error TypeScript must report. */
  misuse: { usage: string; error: string }
  /**
   * Requests with real data (a created resource and the reads of it), sent in order, each answer
   * checked against the document like the blind requests every operation gets; `send` returns the
   * answer's parsed JSON body so a later request can use what an earlier one created.
   */
  exercise?: (send: (request: ApiRequest) => Promise<unknown>) => Promise<void>
  /**
   * A module using the types @hey-api/openapi-ts generates from the document (imported from
   * `./api.js`, e.g. `import type { Order } from './api.js'`); must type-check.
   */
  heyApiUsage?: string
}

/**
 * The suite every service runs on its OpenAPI document (a vitest `describe` of its own), booted
 * by `startServiceUnderTest`: the document it serves at /documentation/json is the checked-in
 * `documentFile`; every operation has an operationId and every response names `x-request-id`; a
 * TypeScript client generated from it (openapi-typescript, openapi-fetch) type-checks `usage`
 * and refuses `misuse`; Redocly's recommended rules find no error; openapi-backend loads it in
 * strict mode, and the service's answers to a blind request of every operation and to `exercise`'s
 * requests have documented statuses and bodies the document allows.
 */
export function describeApiDocument<A extends InjectableApp>(
  service: string,
  start: (env: Record<string, string>) => Promise<A>,
  expected: ApiDocumentExpectations,
  more?: (get: () => ServiceUnderTest<A>) => void,
): void {
  let s: ServiceUnderTest<A> | undefined
  let document: { paths?: Record<string, Record<string, unknown>> } = {}
  const get = (): ServiceUnderTest<A> => {
    if (!s) throw new Error(`${service} did not boot`)
    return s
  }
  beforeAll(async () => {
    s = await startServiceUnderTest(service, start)
    document = (await s.app.inject({ method: 'GET', url: '/documentation/json' })).json()
  })
  afterAll(async () => {
    await s?.close()
  })

  describe(`${service} API description`, () => {
    it('when the OpenAPI document is served, then it is the checked-in copy (vitest run -u rewrites it)', async () => {
      await expect(`${JSON.stringify(document, null, 2)}\n`).toMatchFileSnapshot(expected.documentFile)
    })

    it('when its operations are read, then each has a unique operationId and every response names x-request-id', () => {
      const operations = operationsOf(document)
      expect(operations.length).toBeGreaterThan(0)
      for (const op of operations) {
        expect(op.operationId, `${op.method} ${op.path}`).toMatch(/^[a-z][A-Za-z]+$/)
        for (const [status, response] of Object.entries(op.responses))
          expect(response.headers?.['x-request-id'], `${op.method} ${op.path} ${status}`).toEqual({
            $ref: '#/components/headers/RequestId',
          })
      }
      const ids = operations.map((op) => op.operationId)
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('when Redocly lints it with its recommended rules, then it finds no error', async () => {
      expect(await redoclyErrors(document)).toEqual([])
    })

    it('when a strict loader reads it and every operation is called, then each answer has a documented status and a body the document allows', async () => {
      const api = await strictApi(document)
      const app = get().app as unknown as RequestableApp
      const wrong: string[] = []
      const answered = new Set<string>()
      const send = async (request: ApiRequest): Promise<unknown> => {
        const answer = await checkAnswer(api, app, request)
        answered.add(answer.operationId)
        for (const problem of answer.problems)
          wrong.push(
            `${request.method} ${request.url} (${answer.operationId} ${answer.statusCode}): ${problem}`,
          )
        return answer.body ? (JSON.parse(answer.body) as unknown) : undefined
      }
      for (const request of blindRequests(api)) await send(request)
      await expected.exercise?.(send)
      expect(wrong).toEqual([])
      expect([...answered].sort()).toEqual(
        operationsOf(document)
          .map((op) => op.operationId)
          .sort(),
      )
    })

    it('when a TypeScript client is generated from it, then a use of it type-checks and a wrong use does not', async () => {
      expect(await typecheckOpenApiClient(document, expected.usage)).toEqual([])
      const refused = await typecheckOpenApiClient(document, expected.misuse.usage)
      expect(refused.join('\n')).toContain(expected.misuse.error)
    })

    if (expected.heyApiUsage !== undefined) {
      const usage = expected.heyApiUsage
      it('when @hey-api/openapi-ts generates types from it, then a use of them type-checks', async () => {
        expect(await typecheckHeyApiTypes(document, usage)).toEqual([])
      })
    }

    more?.(get)
  })
}
