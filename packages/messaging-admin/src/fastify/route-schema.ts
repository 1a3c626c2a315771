/** Helpers for the admin routes' JSON Schemas (inputs) and their OpenAPI metadata. */
import type { FastifySchema } from 'fastify'
import { ADMIN_RESPONSES } from './admin-schemas.js'

/** A string of 1 to `maxLength` characters; `uuid` a UUID; `limit` an integer 1..max with a default. */
export const uuid = { type: 'string', format: 'uuid' } as const
export const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const
export const limit = (max: number, fallback: number) =>
  ({ type: 'integer', minimum: 1, maximum: max, default: fallback }) as const
export const query = (properties: Record<string, object>, required: string[] = []): FastifySchema => ({
  querystring: { type: 'object', additionalProperties: false, properties, required },
})
/**
 * A route's schema with its OpenAPI `operationId`, `tags`, `summary` and `response` map (read by
 * @fastify/swagger where the host has it; `security` marks the bearer-guarded writes).
 */
export const schema = (
  operationId: keyof typeof ADMIN_RESPONSES,
  summary: string,
  parts: FastifySchema = {},
  guarded = false,
): FastifySchema => ({
  ...parts,
  response: ADMIN_RESPONSES[operationId],
  ...{
    operationId,
    tags: ['messaging admin'],
    summary,
    ...(guarded ? { security: [{ bearerAuth: [] }] } : {}),
  },
})
