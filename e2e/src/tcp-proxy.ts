import net from 'node:net'

/**
 * A TCP proxy the suite controls, standing between the services and RabbitMQ so a test can cut the
 * link. `cut()` destroys every open connection and refuses new ones (accepts and closes at once, the
 * way a dropped route looks to a client that reconnects); `restore()` lets connections through again.
 * The e2e's own small copy, used while packages/testkit's TcpProxy is not available.
 */
export class E2eTcpProxy {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private isCut = false
  /** The local port the proxy listens on; 0 until `start()` resolved. */
  port = 0

  constructor(
    private readonly target: { host: string; port: number },
    private readonly listenPort = 0,
  ) {}

  /** Listens on 127.0.0.1 (an OS-chosen port unless one was given). */
  async start(): Promise<void> {
    const server = net.createServer((client) => this.accept(client))
    this.server = server
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.listenPort, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as net.AddressInfo).port
  }

  private accept(client: net.Socket): void {
    if (this.isCut) {
      client.destroy()
      return
    }
    const upstream = net.connect(this.target.port, this.target.host)
    this.sockets.add(client)
    this.sockets.add(upstream)
    const close = (): void => {
      client.destroy()
      upstream.destroy()
      this.sockets.delete(client)
      this.sockets.delete(upstream)
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
    client.pipe(upstream)
    upstream.pipe(client)
  }

  /** Drops every open connection and refuses new ones until `restore()`. */
  cut(): void {
    this.isCut = true
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
  }

  /** Lets connections through again. */
  restore(): void {
    this.isCut = false
  }

  /** Number of proxied client+upstream sockets open now. */
  get openSockets(): number {
    return this.sockets.size
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    this.cut()
    const server = this.server
    if (!server) return
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
