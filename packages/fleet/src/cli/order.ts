#!/usr/bin/env node
/**
 * The order CLI: place an order and follow its event chain live, see where an order stands, cancel
 * it, and list or requeue dead-lettered messages and parked outbox rows. `npm run order -- --help`;
 * the commands are in program.ts, the convention they follow in @saga/cli-kit.
 */
import { runCli } from '@saga/cli-kit'
import { orderProgram } from './program.js'

await runCli(orderProgram())
