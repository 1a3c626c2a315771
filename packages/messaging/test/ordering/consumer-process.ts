/**
 * A child process running one ordered consumer (`ordered-consumer.ts`) until it is killed. Reads
 * DATABASE_URL and SETTINGS (`OrderedConsumerSettings` as JSON); prints `ready` once it consumes.
 */
import pg from 'pg'
import { startOrderedConsumer, type OrderedConsumerSettings } from './ordered-consumer.js'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 })
pool.on('error', () => undefined)
const settings = JSON.parse(process.env.SETTINGS ?? '{}') as OrderedConsumerSettings
const { consumer } = startOrderedConsumer(pool, settings)
const timer = setInterval(() => {
  if (!consumer.health().consuming) return
  clearInterval(timer)
  process.stdout.write('ready\n')
}, 20)
