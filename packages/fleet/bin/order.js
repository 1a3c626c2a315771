#!/usr/bin/env node
// `npm run order`: the order CLI, once it is built. Before a build it says so (and how) instead of
// printing node's module-not-found stack trace. Plain JavaScript, so it runs before any build.
/* global URL, console, process */
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli/order.js', import.meta.url)
if (!existsSync(cli)) {
  console.error('The order CLI is not built yet. Build it first:\n    npm run build   (npm start builds too)')
  process.exit(1)
}
try {
  await import(cli.href)
} catch (error) {
  // A workspace it imports (e.g. @saga/contracts) is not built, or only partly.
  if (error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND') {
    console.error(`The order CLI cannot load (${error.message}).\nBuild first:\n    npm run build`)
    process.exit(1)
  }
  throw error
}
