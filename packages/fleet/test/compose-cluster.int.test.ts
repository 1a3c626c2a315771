import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { BROKER_HOSTS, BROKER_REPLICAS } from '../k8s/common.js'
import { SERVICES } from '../src/bootstrap.js'
import { brokerUsers } from '../src/broker-users.js'

// docker-compose.cluster.yml checked without a Docker engine (`npm run test:cluster` runs it), and
// held against the Kubernetes base: the same number of nodes, each service given every node in
// AMQP_URL, in the same order, as the same user and vhost.

const root = fileURLToPath(new URL('../../../', import.meta.url))
const read = (file: string) => readFileSync(join(root, file), 'utf8')

interface ComposeService {
  image?: string
  hostname?: string
  profiles?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
  volumes?: string[]
}
// `!override` (Compose's replace-instead-of-merge tag) is read as the plain map it carries.
const cluster = parse(read('docker-compose.cluster.yml'), { merge: true, logLevel: 'error' }) as {
  name: string
  services: Record<string, ComposeService>
}
const base = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>
}
const nodes = Object.keys(cluster.services).filter((name) => /^rabbit-\d$/.test(name))

/** The Deployment's AMQP_URL of a service in the generated Kubernetes base. */
function k8sAmqpUrl(service: string): string {
  const docs = parseAllDocuments(read(`infra/k8s/base/generated/${service}.yaml`)).map(
    (d) => d.toJS() as { kind: string; spec?: { template?: { spec?: { containers?: unknown[] } } } },
  )
  const deployment = docs.find((d) => d.kind === 'Deployment')
  const containers = (deployment?.spec?.template?.spec?.containers ?? []) as Array<{
    env?: Array<{ name: string; value?: string }>
  }>
  const value = containers[0]?.env?.find((e) => e.name === 'AMQP_URL')?.value
  if (!value) throw new Error(`no AMQP_URL in the ${service} Deployment`)
  return value
}

describe('docker-compose.cluster.yml', () => {
  it('when layered over docker-compose.yml, then three nodes replace the single broker under their own project', () => {
    expect(cluster.name).toBe('saga-cluster')
    expect(nodes).toEqual(['rabbit-1', 'rabbit-2', 'rabbit-3'])
    expect(nodes).toHaveLength(BROKER_REPLICAS)
    expect(cluster.services.rabbitmq?.profiles).toEqual(['single-broker'])
    for (const node of nodes) {
      const s = cluster.services[node]!
      expect(s.image).toBe(base.services.rabbitmq?.image)
      expect(s.hostname).toBe(node)
      expect(s.environment?.RABBITMQ_ERLANG_COOKIE).toMatch(/^\$\{RABBITMQ_ERLANG_COOKIE:-.+\}$/)
      expect(s.volumes).toContain('./infra/rabbitmq/cluster.conf:/etc/rabbitmq/conf.d/20-cluster.conf:ro')
      expect(s.volumes).toContain('./infra/rabbitmq/definitions.json:/etc/rabbitmq/definitions.json:ro')
    }
  })

  it('when the nodes start, then peer discovery lists exactly the three of them', () => {
    const conf = read('infra/rabbitmq/cluster.conf')
    expect(conf).toMatch(/^cluster_formation\.peer_discovery_backend = classic_config$/m)
    const listed = [...conf.matchAll(/^cluster_formation\.classic_config\.nodes\.\d+ = rabbit@(\S+)$/gm)]
    expect(listed.map((m) => m[1])).toEqual(nodes)
  })

  it('when a service starts, then it waits for every node and gets all three in AMQP_URL, as in Kubernetes', () => {
    const users = new Map(brokerUsers().map((u) => [u.service, u]))
    for (const service of SERVICES) {
      const s = cluster.services[service]!
      expect(Object.keys(s.depends_on ?? {}).sort()).toEqual([`postgres-${service}`, ...nodes].sort())
      const urls = s.environment!.AMQP_URL!.split(',').map((u) => new URL(u))
      const user = users.get(service)!
      expect(urls.map((u) => `${u.username}:${u.password}`)).toEqual(
        urls.map(() => `${user.user}:${user.password}`),
      )
      expect(urls.map((u) => u.pathname)).toEqual(urls.map(() => '/saga'))
      // The same list in both: node rabbit-<i+1> of compose is pod i of the RabbitmqCluster.
      expect(urls.map((u) => u.hostname)).toEqual(nodes)
      expect(BROKER_HOSTS.map((h) => `rabbit-${Number(/-server-(\d+)\./.exec(h)![1]) + 1}`)).toEqual(nodes)
      const k8s = k8sAmqpUrl(service).split(',')
      expect(k8s.map((u) => new URL(u.replaceAll('$(', '').replaceAll(')', '')).hostname)).toEqual(
        BROKER_HOSTS,
      )
      expect(k8s.map((u) => new URL(u.replaceAll('$(', '').replaceAll(')', '')).pathname)).toEqual(
        k8s.map(() => '/saga'),
      )
    }
  })
})
