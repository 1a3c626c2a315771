import { allEvents, asyncApiDocument } from '@saga/contracts'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'

/**
 * GET /asyncapi.json: the AsyncAPI 3 document of the fleet's events (every event, its channel on the
 * topic exchange, who sends and who receives it), the one docs/asyncapi.json holds, from the same
 * contracts. Served by the order service, the fleet's entry point, beside its OpenAPI document at
 * /documentation/json. Not in the OpenAPI document itself (a document about the API, not an operation).
 */
export const asyncApiRoute: FastifyPluginCallbackZod = (app, _options, done) => {
  const document = asyncApiDocument(allEvents)
  app.get('/asyncapi.json', { schema: { hide: true } }, () => Promise.resolve(document))
  done()
}
