import net from 'node:net'

/**
 * Asks the OS for a free TCP port on 127.0.0.1 (listen on 0, read it, close). The port is free at
 * the moment of the call only: another process may take it before the service binds it, which
 * `ServiceProcess.waitReady` handles by choosing again on EADDRINUSE. Never one of the dev fleet's
 * 3001-3004.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer()
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo
        server.close(() => resolve(port))
      })
    })
    if (port < 3001 || port > 3004) return port
  }
}
