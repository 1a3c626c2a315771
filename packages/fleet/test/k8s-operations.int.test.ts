// infra/k8s as an operator runs it for a year, checked offline: a second `kubectl apply` of the same
// render changes nothing a controller owns, rollouts need no manual step, a drain fits its grace
// period, backups are scheduled, the alerts and the dashboard are the compose ones, traces can leave
// the pods when tracing is on.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Deployment } from 'kubernetes-models/apps/v1'
import type { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { DEAD_LETTER_QUEUE_DELIVERY_LIMIT } from '../k8s/broker.js'
import { BACKUP_SECRET, BACKUP_STORE, BARMAN_PLUGIN } from '../k8s/database.js'
import { DASHBOARD_LABEL } from '../k8s/observability.js'
import { GRACE_SECONDS, PRE_STOP_SECONDS, SHUTDOWN_TIMEOUT_MS } from '../k8s/workload.js'
import { SERVICES } from '../src/bootstrap.js'
import { build, buildWith, named, objectsOf, ofKind, root, type K8sObject } from './k8s-render.js'
import { crdProblems, OPERATOR_CRDS } from './k8s-operator-crds.js'

const OVERLAYS = { local: 'saga-local', production: 'saga' } as const
type Overlay = keyof typeof OVERLAYS
const overlays = Object.keys(OVERLAYS) as Overlay[]
const text = {} as Record<Overlay, string>
const rendered = {} as Record<Overlay, K8sObject[]>
let traced: K8sObject[]

const podOf = (o: K8sObject) => (o as unknown as Deployment).spec!.template.spec!
const container = (o: K8sObject) => podOf(o).containers.find((c) => c.name === 'service')!
const env = (o: K8sObject, name: string) => container(o).env?.find((e) => e.name === name)

/**
 * Fields a controller writes after an apply, which must therefore not be in the files: the HPA's
 * replica count of a scaled Deployment, status, server-side metadata, a Service's allocated IP.
 */
function controllerOwned(o: K8sObject, scaled: Set<string>): string[] {
  const found: string[] = []
  const where = `${o.kind} ${o.metadata.name}`
  if (o.kind === 'Deployment' && scaled.has(o.metadata.name) && o.spec && 'replicas' in o.spec)
    found.push(`${where}: spec.replicas (owned by the HPA of its ScaledObject)`)
  if ('status' in o) found.push(`${where}: status`)
  for (const key of ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields'])
    if (key in o.metadata) found.push(`${where}: metadata.${key}`)
  if (o.kind === 'Service' && o.spec && ('clusterIP' in o.spec || 'clusterIPs' in o.spec))
    found.push(`${where}: spec.clusterIP`)
  return found
}

beforeAll(async () => {
  for (const overlay of overlays) {
    text[overlay] = await build(`infra/k8s/overlays/${overlay}`)
    rendered[overlay] = objectsOf(text[overlay])
  }
  traced = objectsOf(
    await buildWith('infra/k8s/overlays/production', 'saga', ['infra/k8s/components/tracing']),
  )
}, 120_000)

describe('infra/k8s on a second apply, a rollout and a drain', () => {
  it.each(overlays)(
    'when %s is rendered twice, then both renders are the same and hold no controller-owned field',
    async (overlay) => {
      expect(await build(`infra/k8s/overlays/${overlay}`)).toBe(text[overlay])
      const scaled = new Set(
        ofKind(rendered[overlay], 'ScaledObject').map(
          (o) => (o.spec!.scaleTargetRef as { name: string }).name,
        ),
      )
      expect([...scaled].sort()).toEqual([...SERVICES].sort())
      expect(rendered[overlay].flatMap((o) => controllerOwned(o, scaled))).toEqual([])
      // A Job's template cannot change: one with a fixed name fails the apply of a new image.
      expect(ofKind(rendered[overlay], 'Job')).toEqual([])
      // The check itself sees what it must refuse.
      const deployment = named(rendered[overlay], 'Deployment', 'order')
      expect(
        controllerOwned({ ...deployment, spec: { ...deployment.spec, replicas: 2 } }, scaled),
      ).toHaveLength(1)
    },
  )

  it('when a pod stops, then preStop and the drain fit in its grace period', () => {
    expect(GRACE_SECONDS).toBeGreaterThanOrEqual(PRE_STOP_SECONDS + SHUTDOWN_TIMEOUT_MS / 1000 + 5)
    for (const overlay of overlays) {
      for (const s of [...SERVICES, 'console']) {
        const deployment = named(rendered[overlay], 'Deployment', s)
        expect(podOf(deployment).terminationGracePeriodSeconds).toBe(GRACE_SECONDS)
        if (s !== 'console')
          expect(env(deployment, 'SHUTDOWN_TIMEOUT_MS')?.value).toBe(String(SHUTDOWN_TIMEOUT_MS))
        expect(container(deployment).lifecycle?.preStop?.exec?.command).toEqual([
          'sleep',
          String(PRE_STOP_SECONDS),
        ])
        // A rollout starts a new pod before it stops an old one.
        expect((deployment.spec!.strategy as { rollingUpdate: unknown }).rollingUpdate).toEqual({
          maxSurge: 1,
          maxUnavailable: 0,
        })
      }
    }
  })

  it('when replicas are scheduled, then they spread over nodes (hard) and zones (soft), per revision', () => {
    for (const s of SERVICES) {
      const pod = podOf(named(rendered.production, 'Deployment', s))
      const labels = named(rendered.production, 'Deployment', s).spec!.selector as { matchLabels: object }
      const byKey = new Map(pod.topologySpreadConstraints!.map((c) => [c.topologyKey, c]))
      expect(byKey.get('kubernetes.io/hostname')?.whenUnsatisfiable).toBe('DoNotSchedule')
      expect(byKey.get('topology.kubernetes.io/zone')?.whenUnsatisfiable).toBe('ScheduleAnyway')
      for (const c of byKey.values()) {
        expect(c.labelSelector?.matchLabels).toEqual(labels.matchLabels)
        expect(c.matchLabelKeys).toEqual(['pod-template-hash'])
      }
    }
  })

  it('when a variable refers to another with $(NAME), then that one is defined before it', () => {
    for (const o of [...ofKind(rendered.production, 'Deployment'), ...ofKind(rendered.local, 'Deployment')]) {
      for (const c of [...podOf(o).containers, ...(podOf(o).initContainers ?? [])]) {
        const seen = new Set<string>()
        for (const e of c.env ?? []) {
          for (const [, ref] of (e.value ?? '').matchAll(/\$\(([A-Z_]+)\)/g))
            expect(
              seen,
              `${o.metadata.name}/${c.name}: ${e.name} uses ${ref} before it is defined`,
            ).toContain(ref)
          seen.add(e.name)
        }
      }
    }
  })
})

describe('infra/k8s backups', () => {
  it('when production runs, then each database archives its WAL and is backed up daily to the object store', () => {
    const store = named(rendered.production, 'ObjectStore', BACKUP_STORE).spec!
    expect(store.retentionPolicy).toMatch(/^[1-9][0-9]*[dwm]$/)
    const configuration = store.configuration as {
      destinationPath: string
      s3Credentials: Record<string, { name: string }>
    }
    expect(configuration.destinationPath).toMatch(/^s3:\/\/[^/]+\/.+/)
    expect(configuration.destinationPath).not.toContain('set-me')
    expect(Object.values(configuration.s3Credentials).map((c) => c.name)).toEqual([
      BACKUP_SECRET,
      BACKUP_SECRET,
    ])
    for (const s of SERVICES) {
      const db = named(rendered.production, 'Cluster', `${s}-db`).spec!
      expect(db.plugins).toEqual([
        { name: BARMAN_PLUGIN, isWALArchiver: true, parameters: { barmanObjectName: BACKUP_STORE } },
      ])
      const backup = named(rendered.production, 'ScheduledBackup', `${s}-db`).spec!
      expect(backup).toMatchObject({
        cluster: { name: `${s}-db` },
        method: 'plugin',
        pluginConfiguration: { name: BARMAN_PLUGIN },
      })
      // Six cron fields (seconds first), once a day.
      expect(String(backup.schedule).split(' ')).toHaveLength(6)
    }
    // On a laptop there is no object store: no archive, no schedule, no store.
    expect(ofKind(rendered.local, 'ScheduledBackup')).toEqual([])
    expect(ofKind(rendered.local, 'ObjectStore')).toEqual([])
    for (const db of ofKind(rendered.local, 'Cluster')) expect(db.spec).not.toHaveProperty('plugins')
  })

  it('when the restore rehearsal of docs/deploy.md is followed, then its Cluster is valid and recovers from the archive the clusters write', () => {
    const doc = readFileSync(join(root, 'docs/deploy.md'), 'utf8')
    const clusters = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => parse(m[1]!) as K8sObject)
      .filter((o) => o.kind === 'Cluster')
    expect(clusters).toHaveLength(1)
    const restore = clusters[0]!
    expect(
      crdProblems(OPERATOR_CRDS['postgresql.cnpg.io/v1/Cluster']!, 'docs/deploy.md Cluster', restore.spec!),
    ).toEqual([])
    const origin = (
      restore.spec!.externalClusters as Array<{
        name: string
        plugin: { name: string; parameters: Record<string, string> }
      }>
    )[0]!
    expect(restore.spec!.bootstrap).toMatchObject({
      recovery: { source: origin.name, database: 'order_service', owner: 'order_service' },
    })
    expect(origin.plugin).toEqual({
      name: BARMAN_PLUGIN,
      parameters: { barmanObjectName: BACKUP_STORE, serverName: restore.metadata.name },
    })
    // The copy must not archive into the origin's path.
    expect(restore.spec).not.toHaveProperty('plugins')
    const production = named(rendered.production, 'Cluster', restore.metadata.name).spec!
    expect(restore.spec!.imageName).toBe(production.imageName)
  })
})

describe('infra/k8s monitoring and broker policies', () => {
  it('when Prometheus and Grafana load the cluster objects, then they are the compose alert rules and dashboard', () => {
    for (const overlay of overlays) {
      const rules = parse(readFileSync(join(root, 'infra/observability/prometheus/alerts.yml'), 'utf8')) as {
        groups: unknown
      }
      expect(ofKind(rendered[overlay], 'PrometheusRule').map((r) => r.spec!.groups)).toEqual([rules.groups])
      const [dashboard] = ofKind(rendered[overlay], 'ConfigMap').filter(
        (c) => c.metadata.labels?.[DASHBOARD_LABEL] === '1',
      )
      expect(dashboard?.data?.['saga-fleet.json']).toBe(
        readFileSync(join(root, 'infra/observability/grafana/saga-fleet.json'), 'utf8'),
      )
      // RabbitMQ's queue depths per object, from the Service the cluster operator makes.
      const monitor = named(rendered[overlay], 'ServiceMonitor', 'saga-rabbitmq').spec!
      expect(monitor.selector).toEqual({
        matchLabels: { 'app.kubernetes.io/name': 'saga-rabbitmq', 'app.kubernetes.io/component': 'rabbitmq' },
      })
      expect(monitor.endpoints).toMatchObject([{ port: 'prometheus', path: '/metrics/per-object' }])
      for (const s of SERVICES)
        expect(named(rendered[overlay], 'PodMonitor', `${s}-db-metrics`).spec).toEqual({
          selector: { matchLabels: { 'cnpg.io/cluster': `${s}-db` } },
          podMetricsEndpoints: [{ port: 'metrics' }],
        })
    }
  })

  it('when the broker is RabbitMQ 4, then every handler queue has its own delivery limit and the DLQs keep their messages', () => {
    const queues = ofKind(rendered.production, 'Queue').map(
      (q) => q.spec as { name: string; arguments: Record<string, unknown> },
    )
    const [handlers, dlqs] = [
      queues.filter((q) => !q.name.endsWith('.dlq')),
      queues.filter((q) => q.name.endsWith('.dlq')),
    ]
    for (const q of handlers) expect(q.arguments['x-delivery-limit'], q.name).toBe(20)
    const policies = ofKind(rendered.production, 'Policy').map(
      (p) => p.spec as { pattern: string; priority: number; definition: Record<string, unknown> },
    )
    // The policy that applies to a queue is the matching one of the highest priority.
    const applied = (name: string) =>
      policies.filter((p) => new RegExp(p.pattern).test(name)).sort((a, b) => b.priority - a.priority)[0]
        ?.definition
    for (const q of dlqs)
      expect(applied(q.name), q.name).toMatchObject({ 'delivery-limit': DEAD_LETTER_QUEUE_DELIVERY_LIMIT })
    for (const q of [...handlers, ...dlqs])
      expect(applied(q.name), q.name).toMatchObject({ 'queue-leader-locator': 'balanced' })
    for (const q of handlers) expect(applied(q.name), q.name).not.toHaveProperty('delivery-limit')
  })
})

describe('infra/k8s traces', () => {
  it('when tracing is on (the component), then every service exports to the collector and may reach it', () => {
    for (const s of SERVICES) {
      const endpoint = new URL(env(named(traced, 'Deployment', s), 'OTEL_EXPORTER_OTLP_ENDPOINT')!.value!)
      expect(endpoint.port).toBe('4318')
      const namespace = endpoint.hostname.split('.')[1]
      const policies = ofKind(traced, 'NetworkPolicy').map((p) => (p as unknown as NetworkPolicy).spec!)
      const labels = named(traced, 'Deployment', s).spec!.template as {
        metadata: { labels: Record<string, string> }
      }
      const allows = policies.some(
        (p) =>
          Object.entries(p.podSelector?.matchLabels ?? {}).every(
            ([k, v]) => labels.metadata.labels[k] === v,
          ) &&
          (p.egress ?? []).some(
            (e) =>
              (e.to ?? []).some(
                (t) => t.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === namespace,
              ) && (e.ports ?? []).some((port) => port.port === 4318),
          ),
      )
      expect(allows, `${s} may not reach ${endpoint.host}`).toBe(true)
    }
    // The console starts no tracing SDK: the component leaves its pod as it is.
    const traceless = named(traced, 'Deployment', 'console')
    expect(container(traceless).env?.filter((e) => e.name.startsWith('OTEL_'))).toEqual([])
    expect(podOf(traceless)).toEqual(podOf(named(rendered.production, 'Deployment', 'console')))
    // Without the component nothing is exported, and no egress leaves for it.
    for (const s of SERVICES)
      expect(env(named(rendered.production, 'Deployment', s), 'OTEL_EXPORTER_OTLP_ENDPOINT')).toBeUndefined()
    expect(ofKind(traced, 'NetworkPolicy').every((p) => p.metadata.namespace === 'saga')).toBe(true)
  })
})
