import net from 'node:net'

/** One way through the proxy: what the client sends to the target, or what the target sends back. */
export type ProxyDirection = 'toTarget' | 'fromTarget'

/**
 * A TCP proxy for fault injection between a client and a real server (the shared broker or
 * database keeps running for everyone else):
 * - `cut()`: closes every socket and refuses new connections (a link that is down);
 * - `silence()`: keeps sockets open but stops moving bytes both ways, without closing anything (a
 *   peer that died silently, or a network partition: the bytes wait in TCP buffers, as a stalled
 *   link's would); `silence('fromTarget')` stops only what the server sends (a publish reaches the
 *   broker, its confirm never comes back), `silence('toTarget')` only what the client sends;
 * - `restore()`: back to normal; silenced sockets move their buffered bytes again;
 * - `latencyMs`: a delay added to every chunk each way (a slow link).
 * Example: `const proxy = await TcpProxy.start('127.0.0.1', 5672); amqpUrl = \`amqp://guest:guest@127.0.0.1:${proxy.port}\``.
 */
export class TcpProxy {
  private readonly sockets = new Set<net.Socket>()
  /** The proxy's own connections to the target, one per client connection. */
  private readonly upstreams = new Set<net.Socket>()
  private mode: 'open' | 'cut' = 'open'
  /** The directions that move no bytes now. */
  private readonly silent = new Set<ProxyDirection>()
  /** Delay added to every chunk each way, ms (a slow link); order is kept. Default 0. */
  latencyMs = 0

  private constructor(
    private readonly server: net.Server,
    readonly targetHost: string,
    readonly targetPort: number,
  ) {}

  /** Starts a proxy on 127.0.0.1 (a free port) forwarding to `host:port`. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    const server = net.createServer()
    const proxy = new TcpProxy(server, host, port)
    server.on('connection', (socket) => proxy.accept(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve())
    })
    return proxy
  }

  /** The proxy's port on 127.0.0.1. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port
  }

  /** `host:port` of the proxy, to put in a URL. */
  get address(): string {
    return `127.0.0.1:${this.port}`
  }

  /** Rewrites a URL (amqp://, postgresql://) to go through the proxy. */
  url(targetUrl: string): string {
    const parsed = new URL(targetUrl)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(this.port)
    return parsed.toString()
  }

  /**
   * The local ports of the proxy's open connections to the target: what the target sees as its
   * clients' ports (RabbitMQ's `peer_port`, PostgreSQL's `client_port`), so a test can pick out the
   * connections that came through this proxy among everyone else's.
   */
  upstreamPorts(): number[] {
    return [...this.upstreams].flatMap((socket) => (socket.localPort === undefined ? [] : [socket.localPort]))
  }

  /** Number of open client-side and server-side sockets. */
  get openSockets(): number {
    return this.sockets.size
  }

  cut(): void {
    this.mode = 'cut'
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
  }

  /**
   * Stops moving bytes in `direction` (default both ways) on every open and later connection,
   * closing nothing; `restore()` moves them again.
   */
  silence(direction: ProxyDirection | 'both' = 'both'): void {
    const directions: ProxyDirection[] = direction === 'both' ? ['toTarget', 'fromTarget'] : [direction]
    // A silenced proxy takes connections again (after a cut): they are opened and carry nothing.
    this.mode = 'open'
    for (const silenced of directions) this.silent.add(silenced)
    for (const socket of this.sockets) if (this.silent.has(this.readDirection(socket))) socket.pause()
  }

  restore(): void {
    this.mode = 'open'
    this.silent.clear()
    for (const socket of this.sockets) socket.resume()
  }

  /** The direction of the bytes read from `socket`: a client's go to the target, an upstream's back. */
  private readDirection(socket: net.Socket): ProxyDirection {
    return this.upstreams.has(socket) ? 'fromTarget' : 'toTarget'
  }

  /** Closes every socket and the listener. */
  async close(): Promise<void> {
    this.cut()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(client: net.Socket): void {
    if (this.mode === 'cut') {
      client.destroy()
      return
    }
    const upstream = net.connect(this.targetPort, this.targetHost)
    this.upstreams.add(upstream)
    upstream.on('close', () => this.upstreams.delete(upstream))
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.on('error', () => undefined)
      socket.on('close', () => {
        this.sockets.delete(socket)
        client.destroy()
        upstream.destroy()
      })
      if (this.silent.has(this.readDirection(socket))) socket.pause()
    }
    this.forward(client, upstream)
    this.forward(upstream, client)
  }

  // By hand rather than pipe(): a piped source is resumed by the destination's 'drain', which
  // would undo silence().
  private forward(from: net.Socket, to: net.Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (this.latencyMs > 0) {
        // Same delay for every chunk, so timers fire in arrival order and the stream stays intact.
        setTimeout(() => to.write(chunk), this.latencyMs)
        return
      }
      if (!to.write(chunk)) from.pause()
    })
    to.on('drain', () => {
      if (this.mode === 'open' && !this.silent.has(this.readDirection(from))) from.resume()
    })
  }
}
