import type { ChannelModel } from 'amqplib'
import { backoffDelay } from './backoff.js'

/**
 * The entries of a broker URL setting, trimmed, empty ones kept (for a validator to name): one AMQP
 * URL, or a cluster's nodes separated by commas (a comma in a user name or password: `%2C`).
 */
export function splitBrokerUrls(value: string): string[] {
  return value.split(',').map((entry) => entry.trim())
}

/** One address a connection may use: its URL, and `host:port` (no credentials) for logs and health. */
export interface BrokerAddress {
  readonly url: string
  readonly hostPort: string
}

/**
 * The addresses of a broker URL setting (`splitBrokerUrls`), each URL with `heartbeat=<heartbeatS>`
 * unless it names one; a URL without a port gets 5672 (`amqps`: 5671) in `hostPort`.
 * @throws Error naming the entry that is empty or not an AMQP URL (`AMQP URL 2 of 3 is empty`), never
 * quoting it: it may hold a password.
 */
export function brokerAddresses(value: string, heartbeatS: number): BrokerAddress[] {
  const entries = splitBrokerUrls(value)
  return entries.map((entry, i) => {
    const url = URL.parse(entry)
    if (url === null || (url.protocol !== 'amqp:' && url.protocol !== 'amqps:')) {
      const which = entries.length === 1 ? 'The AMQP URL' : `AMQP URL ${i + 1} of ${entries.length}`
      throw new Error(`${which} is ${entry === '' ? 'empty' : 'not a valid amqp:// or amqps:// URL'}`)
    }
    if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(heartbeatS))
    const port = url.port || (url.protocol === 'amqps:' ? '5671' : '5672')
    return { url: url.toString(), hostPort: `${url.hostname || 'localhost'}:${port}` }
  })
}

/**
 * The index of the address a connection tries first: an FNV-1a hash of `key` (host name, process id,
 * connection name) modulo `count`, so a fleet's connections spread over a cluster's nodes as a
 * shuffle would, yet a test can tell where one starts.
 */
export function firstAddress(key: string, count: number): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0
  return hash % count
}

/**
 * The wait, ms, after connect attempt `attempt` (from 0; a lost connection is attempt 0) failed,
 * with `count` addresses tried in turn: none until a round of addresses is finished, then
 * `backoffDelay` by finished rounds (with one address: after every failure).
 */
export function retryDelay(attempt: number, count: number, baseMs: number, maxMs: number): number {
  return (attempt + 1) % count === 0 ? backoffDelay(Math.floor(attempt / count), baseMs, maxMs) : 0
}

/** The broker node a connection is on, for logs and health. */
export interface BrokerNode {
  /** `host:port` of the address connected to, e.g. `rabbit-2:5672`. */
  readonly address: string
  /**
   * The cluster's name from the connection's server properties (RabbitMQ's `cluster_name`; the same
   * on every node of a cluster, so `address` is what names the node), or null when not sent.
   */
  readonly cluster: string | null
}

/** The node `connection`, opened through `address`, is on. */
export function brokerNode(connection: ChannelModel, address: BrokerAddress): BrokerNode {
  return { address: address.hostPort, cluster: connection.connection.serverProperties.cluster_name ?? null }
}
