// A peer's process: `node dist/server.js <pgboss|dbos|restate> <databaseUrl> <port> [endpointPort ingressUrl]`
// Serves the HTTP facade (api.ts) on 127.0.0.1:<port>, prints `ready <port>` when it answers, and
// stops its peer and exits on SIGTERM or SIGINT.
import pg from 'pg'
import { createApi, type Peer } from './api.js'
import { startPgBoss } from './peers/pgboss.js'

const [kind, databaseUrl, portText, endpointPort, restateIngress] = process.argv.slice(2)
if (!kind || !databaseUrl || !portText) {
  console.error(
    'usage: server.js <pgboss|dbos|restate> <databaseUrl> <port> [endpointPort restateIngressUrl]',
  )
  process.exit(2)
}
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })

async function startPeer(): Promise<Peer> {
  if (kind === 'pgboss') return startPgBoss(databaseUrl!, pool)
  if (kind === 'dbos') return (await import('./peers/dbos.js')).startDbos(databaseUrl!, pool)
  if (kind === 'restate')
    return (await import('./peers/restate.js')).startRestate(pool, Number(endpointPort), restateIngress!)
  throw new Error(`unknown peer ${kind}`)
}

const peer = await startPeer()
const server = createApi(pool, peer)
server.keepAliveTimeout = 65_000
server.listen(Number(portText), '127.0.0.1', () => console.log(`ready ${portText}`))
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close()
    server.closeAllConnections()
    void peer
      .stop()
      .then(() => pool.end())
      .finally(() => process.exit(0))
  })
}
