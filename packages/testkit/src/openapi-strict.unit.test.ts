import { describe, expect, it } from 'vitest'
import { checkAnswer, redoclyErrors, strictApi, type RequestableApp } from './openapi-strict.js'

const document = {
  openapi: '3.0.3',
  info: { title: 't', version: '1', license: { name: 'MIT' } },
  servers: [{ url: '/' }],
  paths: {
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        summary: 'A thing',
        security: [],
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'the thing',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { kind: { type: 'string', enum: ['a', null], nullable: true } },
                  required: ['kind'],
                },
              },
            },
          },
          '404': { description: 'no such thing' },
        },
      },
    },
  },
}

/** An app that answers every request with `statusCode` and `body` as JSON. */
const answering = (statusCode: number, body: unknown): RequestableApp => ({
  inject: () =>
    Promise.resolve({
      statusCode,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
})

describe('strict OpenAPI checks', () => {
  it('when an answer has a documented status and an allowed body, then it has no problem; a null in a nullable enum is allowed', async () => {
    const api = await strictApi(document)
    const answer = await checkAnswer(api, answering(200, { kind: null }), { method: 'GET', url: '/things/1' })
    expect(answer).toMatchObject({ operationId: 'getThing', statusCode: 200, problems: [] })
  })

  it('when an answer breaks the schema or has an undocumented status, then each is named', async () => {
    const api = await strictApi(document)
    const bad = await checkAnswer(api, answering(200, { kind: 'b' }), { method: 'GET', url: '/things/1' })
    expect(bad.problems.join()).toMatch(/kind must be equal to one of the allowed values/)
    const undocumented = await checkAnswer(api, answering(500, {}), { method: 'GET', url: '/things/1' })
    expect(undocumented.problems).toEqual([
      expect.stringMatching(/^status 500 is not documented \(200, 404\)/),
    ])
  })

  it('when nullable has no type beside it, then the strict loader refuses the document and Redocly reports it', async () => {
    const loose = structuredClone(document) as typeof document & Record<string, unknown>
    const schema = loose.paths['/things/{id}'].get.responses['200'].content['application/json'].schema
    Object.assign(schema.properties, { other: { nullable: true, allOf: [{ type: 'object' }] } })
    await expect(strictApi(loose)).rejects.toThrow(/nullable/)
    expect(await redoclyErrors(document)).toEqual([])
    expect(await redoclyErrors(loose)).toEqual([
      expect.stringMatching(/^struct: The `type` field must be defined when the `nullable` field is used/),
    ])
  })
})
