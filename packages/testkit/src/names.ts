import { randomBytes } from 'node:crypto'

/**
 * A name unique to this run: `<prefix>_<base36 time>_<8 hex>`, lower case, safe as a PostgreSQL
 * identifier and a RabbitMQ queue or exchange name. Example: `uniqueName('relay')` -> `relay_m3k9x_1a2b3c4d`.
 */
export function uniqueName(prefix: string): string {
  const safe = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, '_')
  return `${safe}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
}
