import { describe, expect, it } from 'vitest'
import { strictOpenApi } from './openapi-strict.js'

const generated = {
  openapi: '3.0.3',
  info: { title: 'shop service', version: '0.1.0' },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    headers: {
      RequestId: { schema: { type: 'string' } },
      Location: { schema: { type: 'string' } },
    },
    schemas: {
      Step: { type: 'string', enum: ['pay', 'ship'] },
      Address: { type: 'object', properties: { city: { type: 'string' } } },
      Order: {
        type: 'object',
        properties: {
          failedStep: { type: 'string', enum: ['pay', 'ship'], nullable: true },
          waitingFor: { nullable: true, allOf: [{ $ref: '#/components/schemas/Step' }], description: 'next' },
          address: { nullable: true, allOf: [{ $ref: '#/components/schemas/Address' }] },
        },
      },
      OrderInput: { type: 'object' },
    },
  },
  paths: {
    '/orders/{id}': {
      get: {
        responses: {
          '200': {
            description: 'the order',
            headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
          },
        },
      },
      post: { security: [{ bearerAuth: [] }], responses: { '204': { description: 'done' } } },
    },
  },
}

describe('strictOpenApi', () => {
  const strict = strictOpenApi(generated)
  const order = strict.components.schemas.Order as unknown as { properties: Record<string, object> }

  it('when a nullable enum lacks null, then null is one of its values', () => {
    expect(order.properties.failedStep).toEqual({
      type: 'string',
      enum: ['pay', 'ship', null],
      nullable: true,
    })
  })

  it('when a nullable field references a scalar schema, then the referenced schema is written out in place, nullable, an enum with null', () => {
    expect(order.properties.waitingFor).toEqual({
      type: 'string',
      enum: ['pay', 'ship', null],
      nullable: true,
      description: 'next',
    })
    expect(order.properties.address).toEqual({
      type: 'object',
      properties: { city: { type: 'string' } },
      nullable: true,
    })
  })

  it('when an operation says no security, then it is open (security: []); one that says it keeps it', () => {
    expect(strict.paths['/orders/{id}'].get).toMatchObject({ security: [] })
    expect(strict.paths['/orders/{id}'].post.security).toEqual([{ bearerAuth: [] }])
  })

  it('when components are not reachable from an operation, then they are dropped; servers and license are set', () => {
    expect(Object.keys(strict.components.schemas).sort()).toEqual(['Order'])
    expect(Object.keys(strict.components.headers)).toEqual(['RequestId'])
    expect(strict.components.securitySchemes).toEqual(generated.components.securitySchemes)
    expect(strict).toMatchObject({ servers: [{ url: '/' }], info: { license: { name: 'MIT' } } })
    expect(generated.info).toEqual({ title: 'shop service', version: '0.1.0' })
  })
})
