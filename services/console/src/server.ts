// The only file that reads process.env: parse, build, install close-with-grace, listen.
import { runServer } from '@saga/service-kit'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'

await runServer({
  service: 'console',
  loadConfig: () => loadConfig(process.env),
  buildApp: (config) => buildApp(config),
})
