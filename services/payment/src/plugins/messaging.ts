import type { Messaging } from '@saga/messaging'
import type { Tx } from './db.js'

// The payment service's messaging is @saga/messaging/fastify's plugin (registered in app.ts); this is its
// type here, with the service's own transaction client.
declare module 'fastify' {
  interface FastifyInstance {
    messaging: Messaging<Tx>
  }
}
