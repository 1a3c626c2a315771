/**
 * One service's workload: its Deployment (migrations in an init container, the server, a drain that
 * fits the grace period, spread over nodes), Service, PodDisruptionBudget, NetworkPolicies,
 * ServiceMonitor and KEDA ScaledObject.
 */
import type { ServiceName } from '../src/bootstrap.js'
import { DEFAULT_PORTS } from '../src/start-env.js'
import {
  adminTokenEnv,
  BROKER_HOSTS,
  containerSecurity,
  dbCluster,
  dnsEgress,
  EXCHANGE,
  httpProbe,
  labels,
  meta,
  NAMESPACE,
  podSecurity,
  RABBITMQ,
  VHOST,
  type Manifest,
} from './common.js'

/** SHUTDOWN_TIMEOUT_MS of the server: the longest its drain (in-flight requests and handlers) takes. */
export const SHUTDOWN_TIMEOUT_MS = 20_000
/**
 * Seconds the pod keeps serving after Kubernetes decided to stop it, before SIGTERM: the time for the
 * endpoint's removal to reach every kube-proxy and ingress, so no new connection meets a closed port.
 */
export const PRE_STOP_SECONDS = 5
/** preStop, then the drain, then a margin before SIGKILL (the exit and the flush of spans). */
export const GRACE_SECONDS = PRE_STOP_SECONDS + SHUTDOWN_TIMEOUT_MS / 1000 + 5
/** The main container's name in every Deployment; overlays patch it by this name. */
export const SERVICE_CONTAINER = 'service'
/** KEDA adds a replica per this many messages in any one handler queue (ready and unacknowledged). */
export const MESSAGES_PER_REPLICA = 50

const selectorOf = (s: ServiceName) => ({
  'app.kubernetes.io/name': s,
  'app.kubernetes.io/component': 'service',
})

/**
 * Environment shared by the server and the migrate step: DATABASE_URL from CloudNativePG's
 * `<cluster>-app` secret, the broker credentials from the Messaging Topology Operator's
 * `<user>-user-credentials` secret, composed into AMQP_URL by Kubernetes' $(VAR) expansion (so
 * AMQP_USERNAME and AMQP_PASSWORD come first; a test checks every reference is defined before).
 * AMQP_URL lists the three broker nodes (`BROKER_HOSTS`), tried in turn: a connection whose node
 * goes connects to the next, rather than through the client Service, which would hand it any node.
 */
function serviceEnv(s: ServiceName) {
  const secret = (name: string, key: string) => ({ valueFrom: { secretKeyRef: { name, key } } })
  return [
    { name: 'DATABASE_URL', ...secret(`${dbCluster(s)}-app`, 'uri') },
    { name: 'AMQP_USERNAME', ...secret(`${s}-service-user-credentials`, 'username') },
    { name: 'AMQP_PASSWORD', ...secret(`${s}-service-user-credentials`, 'password') },
    {
      name: 'AMQP_URL',
      value: BROKER_HOSTS.map(
        (host) => `amqp://$(AMQP_USERNAME):$(AMQP_PASSWORD)@${host}:5672/${VHOST}`,
      ).join(','),
    },
    { name: 'AMQP_EXCHANGE', value: EXCHANGE },
  ]
}

/** The variables only one service needs; overlays set their values by name. */
const SERVICE_ONLY_ENV: Partial<Record<ServiceName, Array<{ name: string; value: string }>>> = {
  inventory: [{ name: 'SEED_CATALOGUE', value: 'false' }],
  shipment: [{ name: 'CARRIER_ACCOUNT', value: 'set-me-in-the-overlay' }],
}

/**
 * The container that applies the service's migrations before the server starts, in every pod: the
 * first pod of a new image applies them under the runner's advisory lock, every later one finds
 * nothing to do (one query) and goes on. docs/deploy.md, "Rollouts", says why this and not a Job.
 */
function migrateContainer(s: ServiceName) {
  return {
    name: 'migrate',
    image: 'saga/service',
    command: ['node', `services/${s}/dist/migrate.js`],
    env: serviceEnv(s),
    securityContext: containerSecurity,
    resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  }
}

function serverContainer(s: ServiceName) {
  const port = DEFAULT_PORTS[s]
  return {
    name: SERVICE_CONTAINER,
    image: 'saga/service',
    // The server starts with the telemetry import, as in compose: without OTEL_EXPORTER_OTLP_ENDPOINT
    // it loads nothing (docs/operations.md, "Traces"; infra/k8s/components/tracing sets it).
    command: ['node', '--import', '@saga/service-kit/telemetry', `services/${s}/dist/server.js`],
    ports: [{ name: 'http', containerPort: port }],
    env: [
      ...serviceEnv(s),
      { name: 'PORT', value: String(port) },
      { name: 'HOST', value: '0.0.0.0' },
      // The migrate init container applied them; the schema readiness check confirms it.
      { name: 'MIGRATE_ON_START', value: 'false' },
      { name: 'SHUTDOWN_TIMEOUT_MS', value: String(SHUTDOWN_TIMEOUT_MS) },
      // The credential of admin writes (messaging's requeue, discard, retry; the console's actions).
      adminTokenEnv(),
      ...(SERVICE_ONLY_ENV[s] ?? []),
    ],
    securityContext: containerSecurity,
    resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { memory: '384Mi' } },
    startupProbe: httpProbe('/health/live', 30),
    livenessProbe: httpProbe('/health/live', 3),
    readinessProbe: httpProbe('/health/ready', 2),
    lifecycle: { preStop: { exec: { command: ['sleep', String(PRE_STOP_SECONDS)] } } },
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  }
}

/**
 * Replicas of one revision on different nodes (a node's loss takes one), and across zones where the
 * cluster has them. `pod-template-hash` keeps a rollout's new pods from being counted with the old.
 */
function spread(s: ServiceName) {
  const common = {
    maxSkew: 1,
    labelSelector: { matchLabels: selectorOf(s) },
    matchLabelKeys: ['pod-template-hash'],
    nodeTaintsPolicy: 'Honor',
  }
  return [
    { ...common, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
    { ...common, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
  ]
}

/**
 * The Deployment, without `replicas`: the ScaledObject's HPA owns the count, so an apply of these
 * files never resets it. A rollout adds one new pod before it stops an old one.
 */
function deployment(s: ServiceName): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(s, 'service'),
    spec: {
      selector: { matchLabels: selectorOf(s) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: labels(s, 'service') },
        spec: {
          automountServiceAccountToken: false,
          securityContext: podSecurity,
          terminationGracePeriodSeconds: GRACE_SECONDS,
          topologySpreadConstraints: spread(s),
          initContainers: [migrateContainer(s)],
          containers: [serverContainer(s)],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  }
}

/** Who may talk to the service's pods and its database, and where the pods may go. */
function networkPolicies(s: ServiceName): Manifest[] {
  const pods = { podSelector: { matchLabels: { 'app.kubernetes.io/name': s } } }
  const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }
  // Only order's HTTP API is public; the others serve metrics (and their APIs to the namespace: the
  // console reads every service's /health and /admin/messaging).
  const httpFrom = s === 'order' ? [] : [{ podSelector: {} }, monitoring]
  const database = { podSelector: { matchLabels: { 'cnpg.io/cluster': dbCluster(s) } } }
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta(s, 'service'),
      spec: {
        ...pods,
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ ...(httpFrom.length > 0 ? { from: httpFrom } : {}), ports: [{ port: 'http' }] }],
        egress: [
          { to: [database], ports: [{ protocol: 'TCP', port: 5432 }] },
          {
            to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } } }],
            ports: [{ protocol: 'TCP', port: 5672 }],
          },
          dnsEgress,
        ],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta(dbCluster(s), 'database'),
      spec: {
        ...database,
        policyTypes: ['Ingress'],
        ingress: [
          { from: [pods], ports: [{ protocol: 'TCP', port: 5432 }] },
          // Replication between the instances, and the operator's status checks (cnpg-system).
          { from: [database] },
          {
            from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'cnpg-system' } } }],
            ports: [
              { protocol: 'TCP', port: 8000 },
              { protocol: 'TCP', port: 5432 },
            ],
          },
          { from: [monitoring], ports: [{ protocol: 'TCP', port: 9187 }] },
        ],
      },
    },
  ]
}

/**
 * Scaling: the consumers (payment, inventory, shipment) on the depth of their handler queues, through
 * KEDA's RabbitMQ scaler over the management API, as the `keda` monitoring user whose credentials the
 * TriggerAuthentication `keda-rabbitmq` maps (broker.ts); order, whose work is HTTP, on CPU.
 */
function scaledObject(s: ServiceName, queues: string[]): Manifest {
  const host = `http://${RABBITMQ}.${NAMESPACE}.svc:15672/${VHOST}`
  const triggers =
    s === 'order'
      ? [{ type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } }]
      : queues.map((queueName) => ({
          type: 'rabbitmq',
          authenticationRef: { name: 'keda-rabbitmq' },
          // About half a second of work per replica at the measured rates.
          metadata: {
            host,
            protocol: 'http',
            queueName,
            mode: 'QueueLength',
            value: String(MESSAGES_PER_REPLICA),
          },
        }))
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: meta(s, 'service'),
    spec: { scaleTargetRef: { name: s }, minReplicaCount: 2, maxReplicaCount: 6, triggers },
  }
}

/** Everything one service runs as, its database excepted (database.ts). */
export function workloadManifests(s: ServiceName, queues: string[]): Manifest[] {
  return [
    deployment(s),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(s, 'service'),
      spec: { selector: selectorOf(s), ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(s, 'service'),
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(s) } },
    },
    ...networkPolicies(s),
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: meta(s, 'service'),
      spec: {
        selector: { matchLabels: selectorOf(s) },
        endpoints: [{ port: 'http', path: '/metrics', interval: '30s' }],
      },
    },
    scaledObject(s, queues),
  ]
}
