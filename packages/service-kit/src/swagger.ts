import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { documentResponseHeaders } from './openapi-headers.js'
import { strictOpenApi } from './openapi-strict.js'

/** Whether any part of a route's schema is a zod schema (zod's objects carry `_zod`). */
function hasZodPart(schema: Record<string, unknown>): boolean {
  const parts = [schema.body, schema.querystring, schema.params, schema.headers]
  const response = schema.response as Record<string, unknown> | undefined
  return [...parts, ...Object.values(response ?? {})].some(
    (part) => typeof part === 'object' && part !== null && '_zod' in part,
  )
}

/**
 * `jsonSchemaTransform` for routes described with zod; a route described in plain JSON Schema (the
 * messaging admin plugin's, which does not depend on zod) goes into the document as it is.
 */
const transform: typeof jsonSchemaTransform = (document) => {
  const schema = document.schema as Record<string, unknown> | undefined
  if (schema && !hasZodPart(schema)) return { schema: document.schema, url: document.url }
  return jsonSchemaTransform(document)
}

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
 * too (openapi-headers.ts). The document is made strict for OpenAPI 3.0 tools (openapi-strict.ts).
 */
export const swaggerPlugin = fp(
  async (app: FastifyInstance, opts: SwaggerOptions) => {
    await app.register(swagger, {
      openapi: {
        info: { title: opts.title, version: opts.version ?? '0.1.0', description: opts.description },
        // The messaging admin writes take `Authorization: Bearer <ADMIN_TOKEN>`.
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      },
      transform,
      transformObject: (document) =>
        strictOpenApi(documentResponseHeaders(jsonSchemaTransformObject(document))),
    })
    await app.register(swaggerUi, { routePrefix: '/documentation', logLevel: 'warn' })
  },
  { name: 'swagger', fastify: '5.x' },
)
