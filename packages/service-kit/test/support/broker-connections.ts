import { execFile } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The local ports of this process's TCP sockets (Linux: `/proc/self/fd` and `/proc/net/tcp{,6}`). */
function ownLocalPorts(): Set<number> {
  const inodes = new Set<string>()
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1]
      if (inode) inodes.add(inode)
    } catch {
      // The descriptor closed while the folder was read.
    }
  }
  const ports = new Set<number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/)
      const port = columns[1]?.split(':')[1]
      if (port && columns[9] && inodes.has(columns[9])) ports.add(Number.parseInt(port, 16))
    }
  }
  return ports
}

/**
 * How many broker connections named `name` this process holds, by the broker's own list
 * (`rabbitmqctl list_connections`), matched to this process by the connection's peer port.
 */
export async function ownBrokerConnections(name: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    'list_connections',
    '-q',
    '--no-table-headers',
    'peer_port',
    'client_properties',
  ])
  const ports = ownLocalPorts()
  return stdout.split('\n').filter((line) => {
    const [port, properties] = line.split('\t')
    return ports.has(Number(port)) && properties?.includes(`{"connection_name","${name}"}`)
  }).length
}
