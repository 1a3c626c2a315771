// A service in miniature for cluster.int.test.ts: runServer with INSTANCES from the environment and
// an app whose only route answers this process's pid; its close hook prints a line the test reads.
import Fastify from 'fastify'
// The compiled package, so tsx transpiles only this file in each of the three processes.
import { runServer } from '../../dist/index.js'

await runServer({
  service: 'cluster-test',
  loadConfig: () => ({
    HOST: '127.0.0.1',
    PORT: Number(process.env.PORT),
    SHUTDOWN_TIMEOUT_MS: 5_000,
    INSTANCES: Number(process.env.INSTANCES ?? '1'),
  }),
  buildApp: () => {
    const app = Fastify()
    app.get('/pid', () => ({ pid: process.pid }))
    app.addHook('onClose', (_app, done) => {
      process.stdout.write(`closed ${process.pid}\n`)
      done()
    })
    return Promise.resolve(app)
  },
})
