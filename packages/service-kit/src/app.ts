import Fastify, {
  LogController,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { clientError, errorHandlerPlugin } from './errors.js'
import { gracefulHttpShutdown } from './http-shutdown.js'
import { registerJsonBodyParser } from './json-body.js'
import { refuseRepeatedQueryParameters } from './query-repeats.js'
import { chooseLogFormat, loggerOptions, prettyTarget, type LogFormat } from './logger.js'
import { REQUEST_ID_HEADER, genReqId } from './request-id.js'
import { swaggerPlugin } from './swagger.js'

/** Options of `createServiceApp`. */
export interface ServiceAppOptions {
  /** Service name: logged on every line and the OpenAPI title. */
  service: string
  /** pino level (`info`, `debug`, `silent`, ...). */
  logLevel: string
  /**
   * LOG_FORMAT: `json` or `pretty`; unset: pretty when stdout is a terminal and pino-pretty is
   * installed, else JSON (`chooseLogFormat`).
   */
  logFormat?: LogFormat | undefined
  /** Largest accepted request body in bytes (default 1 MiB); larger ones get 413. */
  bodyLimit?: number | undefined
  /** Extra fastify options (tests may pass `logger: false`). */
  fastify?: (Omit<FastifyServerOptions, 'logger' | 'loggerInstance'> & { logger?: boolean }) | undefined
}

/** Longest path parameter the router accepts (fastify's default), in characters. */
export const MAX_PARAM_LENGTH = 100

/**
 * Fastify's `frameworkErrors`: the errors the router raises before any route or hook runs, answered
 * in the one error shape instead of fastify's own body (which echoes the whole path and has no
 * `details`). 414: a path parameter over `MAX_PARAM_LENGTH` characters; 400: a malformed URL
 * (e.g. a broken percent-encoding); anything else keeps its status with the error's message.
 */
function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  request.log.info({ err: error }, 'client error')
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const issue = `is longer than ${MAX_PARAM_LENGTH} characters`
    void reply.code(414).send(clientError(414, `A path parameter ${issue}`, [{ path: 'params', issue }]))
  } else if (error.code === 'FST_ERR_BAD_URL') {
    const issue = 'is not a valid URL component (broken percent-encoding)'
    void reply.code(400).send(clientError(400, 'The URL is invalid', [{ path: 'url', issue }]))
  } else {
    const statusCode = error.statusCode ?? 400
    void reply.code(statusCode).send(clientError(statusCode, error.message))
  }
}

/**
 * A fastify instance with the fleet's defaults, ready for a service to register db, messaging,
 * health, metrics and routes on: pino JSON logs (one `request completed` line per request, at debug),
 * `x-request-id` in and out, zod validation and serialisation, JSON bodies that must be UTF-8 and
 * hold no prototype keys (`parseJsonBody`), a query parameter given twice refused by name
 * (`repeatedQueryParameter`), the one error handler, framework errors (414, bad URL) in
 * its shape, the OpenAPI document, and a close that stops accepting first and resets no connection
 * (`gracefulHttpShutdown`).
 */
export async function createServiceApp(opts: ServiceAppOptions) {
  const { logger, ...fastifyOptions } = opts.fastify ?? {}
  const logFormat = chooseLogFormat(opts.logFormat, process.stdout.isTTY, prettyTarget() !== undefined)
  const app = Fastify({
    ...fastifyOptions,
    logger: logger === false ? false : loggerOptions(opts.service, opts.logLevel, logFormat.format),
    bodyLimit: opts.bodyLimit ?? 1_048_576,
    // A request that reaches a closing app on a connection still open is served (with
    // `Connection: close`) rather than answered with fastify's own 503 body: gracefulHttpShutdown.
    return503OnClosing: false,
    genReqId,
    // Under routerOptions: the top-level option is deprecated in fastify 5 (FSTDEP022, a warning at every start).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      // fastify's two lines per request would be about 79 % of all lines under load: one
      // completion line at debug replaces them (below); errors are still logged by the error handler.
      disableRequestLogging: true,
    }),
  }).withTypeProvider<ZodTypeProvider>()
  // First of every preClose hook: stop accepting and settle keep-alive connections before messaging drains.
  gracefulHttpShutdown(app)
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
  if (logFormat.warning) app.log.warn(logFormat.warning)
  registerJsonBodyParser(app)
  refuseRepeatedQueryParameters(app)
  await app.register(errorHandlerPlugin)
  await app.register(swaggerPlugin, { title: `${opts.service} service` })
  return app
}

/** The app type services build on: fastify with the zod type provider. */
export type ServiceApp = Awaited<ReturnType<typeof createServiceApp>>
