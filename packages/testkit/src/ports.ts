import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'

/**
 * Asks the OS for a free TCP port on 127.0.0.1 (listens on port 0, reads the port, closes). The
 * port is free at the moment of the call only: another process may take it before the caller binds.
 */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
