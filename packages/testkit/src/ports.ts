import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * Ports below the OS's ephemeral range (`net.ipv4.ip_local_port_range`, 32768-60999 by default on
 * Linux) and above the well-known servers' (PostgreSQL 5432, RabbitMQ 5672, the fleet's 3000s).
 * The kernel hands out ephemeral ports to every outgoing connection and every listen on port 0, so a
 * port picked there and released may be taken by any pg or AMQP client before the caller binds it
 * (CI saw a service fail `listen EADDRINUSE` on such a port). Nothing takes a port of this range
 * unless asked for it by number.
 */
const LOWEST = 20_000
const RESERVED = new Set([25_672]) // RabbitMQ's default distribution port (AMQP port + 20000)

// Ports this process handed out: two calls before either caller binds never get the same port.
const handedOut = new Set<number>()

/** The first port of the ephemeral range, from /proc when it says (Linux), else the default. */
function ephemeralStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    )
    if (Number.isInteger(first) && first > LOWEST + 1_000) return first
  } catch {
    // not Linux: the default range
  }
  return 32_768
}

/** True when `port` can be bound on 127.0.0.1 now. */
async function bindable(port: number): Promise<boolean> {
  const server = createServer()
  try {
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
    return true
  } catch {
    return false
  } finally {
    if (server.listening) await new Promise((resolve) => server.close(resolve))
  }
}

/**
 * A free TCP port on 127.0.0.1 for a server a test starts, drawn at random below the ephemeral
 * range so no client connection or port-0 listener of any process can take it before the caller
 * binds it, and never one this process handed out before. A test in another process that draws the
 * same port at the same moment still can: the range holds about 12,000 ports, so the odds stay
 * small. Where the ephemeral range starts at 21,000 or below, the default range's start is used.
 * @throws Error when 100 draws found no port that could be bound
 */
export async function freePort(): Promise<number> {
  const end = ephemeralStart()
  for (let draw = 0; draw < 100; draw++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST))
    if (RESERVED.has(port) || handedOut.has(port) || !(await bindable(port))) continue
    handedOut.add(port)
    return port
  }
  throw new Error(`no free port between ${LOWEST} and ${end - 1} after 100 draws`)
}
