import { describeServiceHealth } from '@saga/testkit'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

describeServiceHealth('payment', async (env) => {
  const app = await buildApp(loadConfig(env), { fastify: { logger: false } })
  await app.ready()
  return app
})
