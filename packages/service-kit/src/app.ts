import Fastify, { LogController, type FastifyServerOptions } from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { errorHandlerPlugin } from './errors.js'
import { loggerOptions } from './logger.js'
import { REQUEST_ID_HEADER, genReqId } from './request-id.js'
import { swaggerPlugin } from './swagger.js'

/** Options of `createServiceApp`. */
export interface ServiceAppOptions {
  /** Service name: logged on every line and the OpenAPI title. */
  service: string
  /** pino level (`info`, `debug`, `silent`, ...). */
  logLevel: string
  /** Largest accepted request body in bytes (default 1 MiB); larger ones get 413. */
  bodyLimit?: number | undefined
  /** Extra fastify options (tests may pass `logger: false`). */
  fastify?: (Omit<FastifyServerOptions, 'logger' | 'loggerInstance'> & { logger?: boolean }) | undefined
}

/**
 * A fastify instance with the fleet's defaults, ready for a service to register db, messaging,
 * health, metrics and routes on: pino JSON logs (one `request completed` line per request, at debug),
 * `x-request-id` in and out, zod validation and
 * serialisation, the one error handler, and the OpenAPI document.
 */
export async function createServiceApp(opts: ServiceAppOptions) {
  const { logger, ...fastifyOptions } = opts.fastify ?? {}
  const app = Fastify({
    ...fastifyOptions,
    logger: logger === false ? false : loggerOptions(opts.service, opts.logLevel),
    bodyLimit: opts.bodyLimit ?? 1_048_576,
    genReqId,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      // fastify's two lines per request were about 79 % of all lines under load (issue 11): one
      // completion line at debug replaces them (below); errors are still logged by the error handler.
      disableRequestLogging: true,
    }),
  }).withTypeProvider<ZodTypeProvider>()
  app.addHook('onResponse', (request, reply, done) => {
    request.log.debug(
      {
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        responseTimeMs: reply.elapsedTime,
      },
      'request completed',
    )
    done()
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id)
    done(null, payload)
  })
  await app.register(errorHandlerPlugin)
  await app.register(swaggerPlugin, { title: `${opts.service} service` })
  return app
}

/** The app type services build on: fastify with the zod type provider. */
export type ServiceApp = Awaited<ReturnType<typeof createServiceApp>>
