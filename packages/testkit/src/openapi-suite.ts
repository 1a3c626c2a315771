import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operationsOf, typecheckOpenApiClient } from './openapi.js'
import { startServiceUnderTest, type InjectableApp, type ServiceUnderTest } from './service-under-test.js'

/** What `describeApiDocument` checks a service's OpenAPI document against. */
export interface ApiDocumentExpectations {
  /** The checked-in copy, an absolute path (docs/openapi/<service>.json); `vitest run -u` rewrites it. */
  documentFile: string
  /** A module using a client generated from the document (see `typecheckOpenApiClient`); must type-check. */
  usage: string
  /** A wrong use (a missing field, a wrong type) and a fragment of the error TypeScript must report. */
  misuse: { usage: string; error: string }
}

/**
 * The suite every service runs on its OpenAPI document (a vitest `describe` of its own), booted
 * by `startServiceUnderTest`: the document it serves at /documentation/json is the checked-in
 * `documentFile`; every operation has an operationId and every response names `x-request-id`; a
 * TypeScript client generated from it (openapi-typescript, openapi-fetch) type-checks `usage`
 * and refuses `misuse`.
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

    it('when a TypeScript client is generated from it, then a use of it type-checks and a wrong use does not', async () => {
      expect(await typecheckOpenApiClient(document, expected.usage)).toEqual([])
      const refused = await typecheckOpenApiClient(document, expected.misuse.usage)
      expect(refused.join('\n')).toContain(expected.misuse.error)
    })

    more?.(get)
  })
}
