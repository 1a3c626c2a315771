import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'

/** Options of `swaggerPlugin`. */
export interface SwaggerOptions {
  title: string
  version?: string | undefined
  description?: string | undefined
}

/**
 * OpenAPI 3 from the routes' zod schemas: the document at `/documentation/json` (and `/yaml`), the UI
 * at `/documentation`. Register it before the routes so their schemas are collected.
 */
export const swaggerPlugin = fp(
  async (app: FastifyInstance, opts: SwaggerOptions) => {
    await app.register(swagger, {
      openapi: {
        info: { title: opts.title, version: opts.version ?? '0.1.0', description: opts.description },
      },
      transform: jsonSchemaTransform,
      transformObject: jsonSchemaTransformObject,
    })
    await app.register(swaggerUi, { routePrefix: '/documentation', logLevel: 'warn' })
  },
  { name: 'swagger', fastify: '5.x' },
)
