import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { documentResponseHeaders } from './openapi-headers.js'

/** Options of `swaggerPlugin`. */
export interface SwaggerOptions {
  title: string
  version?: string | undefined
  description?: string | undefined
}

/**
 * OpenAPI 3 from the routes' zod schemas: the document at `/documentation/json` (and `/yaml`), the UI
 * at `/documentation`. Register it before the routes so their schemas are collected. A zod schema
 * registered with an id (`.meta({ id: 'Order' })`) becomes a component that responses and request
 * bodies reference (`Order` as sent, `OrderInput` as accepted); the response headers are components
 * too (openapi-headers.ts).
 */
export const swaggerPlugin = fp(
  async (app: FastifyInstance, opts: SwaggerOptions) => {
    await app.register(swagger, {
      openapi: {
        info: { title: opts.title, version: opts.version ?? '0.1.0', description: opts.description },
      },
      transform: jsonSchemaTransform,
      transformObject: (document) => documentResponseHeaders(jsonSchemaTransformObject(document)),
    })
    await app.register(swaggerUi, { routePrefix: '/documentation', logLevel: 'warn' })
  },
  { name: 'swagger', fastify: '5.x' },
)
