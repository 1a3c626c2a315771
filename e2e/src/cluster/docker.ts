import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { repoRoot } from '../service-process.js'
import { SERVICES, type ServiceName } from '../run.js'

const exec = promisify(execFile)

/** The cluster's compose project (docker-compose.cluster.yml's `name`) and its files. */
export const PROJECT = 'saga-cluster'
const FILES = ['-f', 'docker-compose.yml', '-f', 'docker-compose.cluster.yml']
/** The compose network the nodes and services share (`<project>_default`). */
export const NETWORK = `${PROJECT}_default`

/** The broker nodes, as compose services and as Erlang node names (`rabbit@<service>`). */
export const NODES = ['rabbit-1', 'rabbit-2', 'rabbit-3'] as const
export type BrokerNode = (typeof NODES)[number]

/** The container of a compose service of the cluster project (compose's `<project>-<service>-1`). */
export const container = (service: string): string => `${PROJECT}-${service}-1`

/** The compose service of an Erlang node name (`rabbit@rabbit-2` -> `rabbit-2`); throws on another. */
export function nodeOf(erlangNode: string): BrokerNode {
  const name = erlangNode.replace(/^rabbit@/, '')
  const node = NODES.find((n) => n === name)
  if (!node) throw new Error(`'${erlangNode}' is not a node of the cluster (${NODES.join(', ')})`)
  return node
}

/** Runs `docker <args>` and returns its stdout; throws with its stderr when it fails. */
export async function docker(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await exec('docker', args, { cwd: repoRoot, timeout: timeoutMs, maxBuffer: 64 << 20 })
    return stdout
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim()
    throw new Error(`docker ${args.join(' ')} failed: ${stderr || String(error)}`, { cause: error })
  }
}

/** `docker compose -f docker-compose.yml -f docker-compose.cluster.yml <args>` in the repo root. */
export const compose = (args: string[], timeoutMs = 30 * 60_000): Promise<string> =>
  docker(['compose', ...FILES, ...args], timeoutMs)

/** `rabbitmqctl -q <args>` inside a node's container (its own CLI, its own cookie). */
export const rabbitmqctl = (node: BrokerNode, args: string[], timeoutMs = 30_000): Promise<string> =>
  docker(['exec', container(node), 'rabbitmqctl', '-q', ...args], timeoutMs)

/** One quorum queue of the vhost `saga`: its leader's node and its messages (ready and unacknowledged). */
export interface QueueLeader {
  queue: string
  leader: BrokerNode
  messages: number
}

/** The vhost's quorum queues with their leaders, asked of `via` (a running node). */
export async function queueLeaders(via: BrokerNode): Promise<QueueLeader[]> {
  const out = await rabbitmqctl(via, [
    'list_queues',
    '-p',
    'saga',
    '--no-table-headers',
    'name',
    'type',
    'leader',
    'messages',
  ])
  return out.split('\n').flatMap((line) => {
    const [queue, type, leader, messages] = line.trim().split(/\s+/)
    if (!queue || type !== 'quorum' || !leader?.startsWith('rabbit@')) return []
    return [{ queue, leader: nodeOf(leader), messages: Number(messages) || 0 }]
  })
}

/** The erlang nodes `via` sees running, as compose services. */
export async function runningNodes(via: BrokerNode): Promise<BrokerNode[]> {
  const out = await rabbitmqctl(via, ['eval', 'rabbit_nodes:all_running().'])
  return [...out.matchAll(/rabbit@(rabbit-\d)/g)].map((m) => nodeOf(`rabbit@${m[1]}`))
}

/** The user each service connects as (definitions.json): `order-service`, ... */
const serviceOfUser = (user: string): ServiceName | undefined => SERVICES.find((s) => user === `${s}-service`)

/**
 * The node of each AMQP connection of each service, asked of `via` (one entry per connection: a
 * service holds several, its relay's and its consumers'). A connection's pid names its node
 * (`<rabbit@rabbit-2.1690.1234.0>`).
 */
export async function serviceConnections(via: BrokerNode): Promise<Record<ServiceName, BrokerNode[]>> {
  const out = await rabbitmqctl(via, ['list_connections', '--no-table-headers', 'user', 'pid'])
  const found = Object.fromEntries(SERVICES.map((s) => [s, [] as BrokerNode[]])) as Record<
    ServiceName,
    BrokerNode[]
  >
  for (const line of out.split('\n')) {
    const [user, pid] = line.trim().split(/\s+/)
    const service = user ? serviceOfUser(user) : undefined
    const node = pid?.match(/rabbit@(rabbit-\d)/)?.[1]
    if (service && node) found[service].push(nodeOf(`rabbit@${node}`))
  }
  return found
}

/** Whether a container is running (`docker inspect`'s State.Running). */
export async function isRunning(service: string): Promise<boolean> {
  const out = await docker(['inspect', '-f', '{{.State.Running}}', container(service)])
  return out.trim() === 'true'
}

/** Cuts a node off the compose network (its peers, the services, its published ports). */
export const disconnect = (node: BrokerNode): Promise<string> =>
  docker(['network', 'disconnect', '--force', NETWORK, container(node)])

/** Puts a node back on the compose network under its compose name, so its peers resolve it again. */
export const reconnect = (node: BrokerNode): Promise<string> =>
  docker(['network', 'connect', '--alias', node, NETWORK, container(node)])
