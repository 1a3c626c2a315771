import { randomUUID } from 'node:crypto'
import { orderBody } from '../api.js'
import type { Ledger } from '../ledger.js'
import { SERVICES } from '../run.js'
import { delay, eventually } from '../wait.js'
import {
  container,
  disconnect,
  docker,
  NODES,
  queueLeaders,
  reconnect,
  runningNodes,
  serviceConnections,
  type BrokerNode,
} from './docker.js'

/** What a fault needs: the order service's URL and the ledger its probe order goes into. */
export interface FaultContext {
  orderUrl: string
  ledger: Ledger
  /** A SKU with plenty of stock, for the probe order. */
  sku: string
  say: (line: string) => void
}

/** One fault as it happened: what it hit and how long each step of the recovery took, s. */
export interface FaultOutcome {
  name: string
  target: BrokerNode
  detail: string
  /** From the fault to each recovery signal (`sagaFlows`: a probe order placed at the fault ends terminal). */
  recoveryS: Record<string, number>
}

const since = (t0: number): number => Math.round((performance.now() - t0) / 100) / 10
const LONG = { timeoutMs: 5 * 60_000, intervalMs: 500 }

/** A node other than those given, running, to ask (rabbitmqctl) while they are down. */
const another = (...not: BrokerNode[]): BrokerNode => NODES.find((n) => !not.includes(n)) as BrokerNode

/**
 * Places one order with an idempotency key, retrying (5xx, no answer) until a 201, puts it in the
 * ledger, and waits until the order service reports it CONFIRMED or CANCELLED: the saga runs again.
 */
async function probeOrder(ctx: FaultContext): Promise<void> {
  const key = randomUUID()
  const body = orderBody([{ sku: ctx.sku, quantity: 1 }])
  const sentAt = Date.now()
  const id = await eventually(
    'the probe order placed',
    async () => {
      const res = await fetch(`${ctx.orderUrl}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      })
      if (res.status >= 500) return false
      if (res.status !== 201) throw new Error(`POST /orders answered ${res.status}: ${await res.text()}`)
      return ((await res.json()) as { id: string }).id
    },
    LONG,
  )
  ctx.ledger.add({ id, body, sentAt })
  await eventually(
    `the probe order ${id} terminal`,
    async () => {
      const res = await fetch(`${ctx.orderUrl}/orders/${id}`, { signal: AbortSignal.timeout(10_000) })
      const order = (await res.json()) as { status?: string }
      return order.status === 'CONFIRMED' || order.status === 'CANCELLED'
    },
    LONG,
  )
}

/** Starts a stopped or killed node's container and waits until its peers see all three running. */
async function bringBack(node: BrokerNode): Promise<void> {
  await docker(['start', container(node)])
  await eventually(
    `${node} back in the cluster`,
    async () => (await runningNodes(node)).length === NODES.length,
    LONG,
  )
}

/**
 * After `node` went down at `t0`: the seconds until `first` holds (named `first.key`), until a probe
 * order ends terminal (`sagaFlows`), and, the node started again, until it runs among its peers
 * (`rejoined`).
 */
async function recoverFrom(
  ctx: FaultContext,
  node: BrokerNode,
  t0: number,
  first: { key: string; what: string; holds: () => Promise<boolean> },
): Promise<Record<string, number>> {
  const recoveryS: Record<string, number> = {}
  await eventually(first.what, first.holds, LONG)
  recoveryS[first.key] = since(t0)
  await probeOrder(ctx)
  recoveryS.sagaFlows = since(t0)
  await bringBack(node)
  recoveryS.rejoined = since(t0)
  return recoveryS
}

/**
 * kill -9 of the node that leads the busiest quorum queue (most messages; the first when all are
 * empty): until another node leads that queue, the saga runs (a probe order ends terminal), then
 * the node is started again and rejoins.
 */
export async function killBusiestLeader(ctx: FaultContext): Promise<FaultOutcome> {
  const leaders = await queueLeaders('rabbit-1')
  const fleetQueues = leaders.filter((q) => /^(order|payment|inventory|shipment)\./.test(q.queue))
  const busiest = [...fleetQueues].sort((a, b) => b.messages - a.messages)[0]
  if (!busiest) throw new Error('no quorum queue of the fleet found on the cluster')
  const node = busiest.leader
  ctx.say(`kill -9 ${node}: leader of ${busiest.queue} (${busiest.messages} messages)`)
  const t0 = performance.now()
  await docker(['kill', '-s', 'KILL', container(node)])
  const recoveryS = await recoverFrom(ctx, node, t0, {
    key: 'newLeader',
    what: `a new leader of ${busiest.queue}`,
    holds: async () => {
      const now = (await queueLeaders(another(node))).find((q) => q.queue === busiest.queue)
      return now !== undefined && now.leader !== node
    },
  })
  return { name: 'kill -9 of the busiest leader', target: node, detail: busiest.queue, recoveryS }
}

/**
 * `docker stop` (SIGTERM, a clean shutdown) of each node that holds a connection of a service, one
 * at a time: every service has as many connections as before, none on the stopped node, a probe
 * order ends terminal, then the node is started again and rejoins before the next.
 */
export async function stopConnectedNodes(ctx: FaultContext): Promise<FaultOutcome[]> {
  const before = await serviceConnections('rabbit-1')
  const nodes = NODES.filter((n) => SERVICES.some((s) => before[s].includes(n)))
  if (nodes.length === 0) throw new Error('no service connection found on the cluster')
  const outcomes: FaultOutcome[] = []
  for (const node of nodes) {
    const connected = await serviceConnections(node)
    const services = SERVICES.filter((s) => connected[s].includes(node))
    const detail = services.map((s) => `${s} x${connected[s].filter((n) => n === node).length}`).join(', ')
    ctx.say(`docker stop ${node}: connections of ${detail}`)
    const t0 = performance.now()
    await docker(['stop', '-t', '30', container(node)])
    const stopped = since(t0)
    const recoveryS = await recoverFrom(ctx, node, t0, {
      key: 'reconnected',
      what: `every service's connections back, none on ${node}`,
      holds: async () => {
        const now = await serviceConnections(another(node))
        return SERVICES.every((s) => now[s].length >= connected[s].length && !now[s].includes(node))
      },
    })
    outcomes.push({
      name: 'stop of a connected node',
      target: node,
      detail,
      recoveryS: { stopped, ...recoveryS },
    })
  }
  return outcomes
}

/**
 * Cuts the node leading the most quorum queues off the network for `holdS` (its peers, the services
 * connected to it, its published port), then puts it back: a probe order placed at the cut ends
 * terminal (during or after the partition), and the node runs with its peers again.
 */
export async function partitionNode(ctx: FaultContext, holdS = 30): Promise<FaultOutcome> {
  const leaders = await queueLeaders('rabbit-1')
  const led = NODES.map((n) => ({ n, count: leaders.filter((q) => q.leader === n).length }))
  const node = led.sort((a, b) => b.count - a.count)[0]?.n ?? 'rabbit-1'
  ctx.say(`partition ${node} for ${holdS} s (it leads ${led[0]?.count ?? 0} quorum queues)`)
  const t0 = performance.now()
  await disconnect(node)
  const recoveryS: Record<string, number> = {}
  const probe = probeOrder(ctx).then(() => (recoveryS.sagaFlows = since(t0)))
  probe.catch(() => undefined) // awaited below, after the partition
  try {
    await delay(holdS * 1000) // the fault's own duration
  } finally {
    await reconnect(node)
  }
  recoveryS.reconnectedNetwork = since(t0)
  await probe
  await eventually(
    `${node} running with its peers`,
    async () =>
      (await runningNodes(node)).length === NODES.length &&
      (await runningNodes(another(node))).length === NODES.length,
    LONG,
  )
  recoveryS.healed = since(t0)
  return {
    name: `partition for ${holdS} s`,
    target: node,
    detail: `${led[0]?.count ?? 0} leaders`,
    recoveryS,
  }
}
