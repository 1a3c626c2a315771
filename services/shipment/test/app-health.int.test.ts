import { describeServiceHealth, whenReady } from '@saga/testkit'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

describeServiceHealth('shipment', (env) =>
  whenReady(buildApp(loadConfig(env), { fastify: { logger: false } })),
)
