/**
 * The Kubernetes base of infra/k8s, as data: per service a Deployment, Service, PodDisruptionBudget,
 * migration Job, NetworkPolicies, ServiceMonitor, KEDA ScaledObject and CloudNativePG Cluster; the
 * RabbitMQ cluster and its topology (vhost, exchange, quorum queues and DLQs, bindings, policy, one
 * user per service with broker-users.ts's permissions). `generate.ts` writes it as YAML; a test checks
 * the committed files are what this produces, renders the overlays and validates every object.
 */
import type { TopologyDefinitions } from '@saga/messaging/parts'
import type { ServiceName } from '../src/bootstrap.js'
import { brokerUsers } from '../src/broker-users.js'
import { DEFAULT_PORTS } from '../src/start-env.js'

/** A Kubernetes object as plain data. */
export type Manifest = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: unknown }

export const RABBITMQ = 'saga-rabbitmq'
export const VHOST = 'saga'
export const EXCHANGE = 'saga.events'
const PART_OF = { 'app.kubernetes.io/part-of': 'saga' }
const cluster = { rabbitmqClusterReference: { name: RABBITMQ } }
const labels = (name: string, component: string) => ({
  'app.kubernetes.io/name': name,
  'app.kubernetes.io/component': component,
  ...PART_OF,
})
const dbCluster = (s: ServiceName) => `${s}-db`

// Read-only root, no privileges, the image's unprivileged user (uid 1000 = node).
const podSecurity = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
}
const containerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
}

/**
 * Environment shared by the service and its migration Job: DATABASE_URL from CloudNativePG's
 * `<cluster>-app` secret, the broker credentials from the Messaging Topology Operator's
 * `<user>-user-credentials` secret, composed into AMQP_URL by Kubernetes' $(VAR) expansion.
 */
function serviceEnv(s: ServiceName) {
  const secret = (name: string, key: string) => ({ valueFrom: { secretKeyRef: { name, key } } })
  return [
    { name: 'DATABASE_URL', ...secret(`${dbCluster(s)}-app`, 'uri') },
    { name: 'AMQP_USERNAME', ...secret(`${s}-service-user-credentials`, 'username') },
    { name: 'AMQP_PASSWORD', ...secret(`${s}-service-user-credentials`, 'password') },
    { name: 'AMQP_URL', value: `amqp://$(AMQP_USERNAME):$(AMQP_PASSWORD)@${RABBITMQ}:5672/${VHOST}` },
    { name: 'AMQP_EXCHANGE', value: EXCHANGE },
  ]
}

/**
 * The pod template of the service's Deployment and of its migration Job: the labels, the pod and
 * container security, the image running `services/<s>/dist/<command>.js` with `serviceEnv`, and the
 * writable /tmp. The rest is what only one of them has: the container's ports, probes, resources
 * and env (`container`, spread over the shared container), the Job's restart policy and the
 * Deployment's grace period.
 */
function podTemplate(
  s: ServiceName,
  component: string,
  command: string,
  extra: {
    container: Record<string, unknown>
    restartPolicy?: string
    terminationGracePeriodSeconds?: number
  },
) {
  const { restartPolicy, terminationGracePeriodSeconds } = extra
  return {
    metadata: { labels: labels(s, component) },
    spec: {
      ...(restartPolicy === undefined ? {} : { restartPolicy }),
      automountServiceAccountToken: false,
      securityContext: podSecurity,
      ...(terminationGracePeriodSeconds === undefined ? {} : { terminationGracePeriodSeconds }),
      containers: [
        {
          name: s,
          image: 'saga/service',
          // The server starts with the telemetry import, as in compose: without OTEL_EXPORTER_OTLP_ENDPOINT
          // it loads nothing (README, "Traces"). The migration Job needs no traces.
          command:
            command === 'server'
              ? ['node', '--import', '@saga/service-kit/telemetry', `services/${s}/dist/server.js`]
              : ['node', `services/${s}/dist/${command}.js`],
          env: serviceEnv(s),
          securityContext: containerSecurity,
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          ...extra.container,
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    },
  }
}

function deployment(s: ServiceName, extraEnv: Array<{ name: string; value: string }>): Manifest {
  const port = DEFAULT_PORTS[s]
  const probe = (path: string, failureThreshold: number) => ({
    httpGet: { path, port: 'http' },
    periodSeconds: 10,
    timeoutSeconds: 3,
    failureThreshold,
  })
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: s, labels: labels(s, 'service') },
    spec: {
      replicas: 2,
      selector: { matchLabels: { 'app.kubernetes.io/name': s, 'app.kubernetes.io/component': 'service' } },
      template: podTemplate(s, 'service', 'server', {
        // Above SHUTDOWN_TIMEOUT_MS (20 s): in-flight handlers drain before the kill.
        terminationGracePeriodSeconds: 30,
        container: {
          ports: [{ name: 'http', containerPort: port }],
          env: [
            ...serviceEnv(s),
            { name: 'PORT', value: String(port) },
            { name: 'HOST', value: '0.0.0.0' },
            // The migration Job applies them before the rollout (docs/deploy.md).
            { name: 'MIGRATE_ON_START', value: 'false' },
            ...extraEnv,
          ],
          resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { memory: '384Mi' } },
          startupProbe: probe('/health/live', 30),
          livenessProbe: probe('/health/live', 3),
          readinessProbe: probe('/health/ready', 2),
        },
      }),
    },
  }
}

function migrationJob(s: ServiceName): Manifest {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${s}-migrate`, labels: labels(s, 'migrate') },
    spec: {
      backoffLimit: 3,
      ttlSecondsAfterFinished: 86_400,
      template: podTemplate(s, 'migrate', 'migrate', {
        restartPolicy: 'OnFailure',
        container: {
          resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
      }),
    },
  }
}

/** Who may talk to the service's pods and its database, and where the pods may go. */
function networkPolicies(s: ServiceName): Manifest[] {
  const pods = { podSelector: { matchLabels: { 'app.kubernetes.io/name': s } } }
  const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }
  const dns = {
    to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
    ports: [
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ],
  }
  // Only order's HTTP API is public; the others serve metrics (and their APIs to the namespace).
  const httpFrom = s === 'order' ? [] : [{ podSelector: {} }, monitoring]
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: s, labels: labels(s, 'service') },
      spec: {
        ...pods,
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ ...(httpFrom.length > 0 ? { from: httpFrom } : {}), ports: [{ port: 'http' }] }],
        egress: [
          {
            to: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': dbCluster(s) } } }],
            ports: [{ protocol: 'TCP', port: 5432 }],
          },
          {
            to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } } }],
            ports: [{ protocol: 'TCP', port: 5672 }],
          },
          dns,
        ],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: dbCluster(s), labels: labels(dbCluster(s), 'database') },
      spec: {
        podSelector: { matchLabels: { 'cnpg.io/cluster': dbCluster(s) } },
        policyTypes: ['Ingress'],
        ingress: [
          { from: [pods], ports: [{ protocol: 'TCP', port: 5432 }] },
          // Replication between the instances, and the operator's status checks (cnpg-system).
          { from: [{ podSelector: { matchLabels: { 'cnpg.io/cluster': dbCluster(s) } } }] },
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
 * KEDA's RabbitMQ scaler over the management API (a monitoring user's URL in the secret
 * `keda-rabbitmq`, key `host`); order, whose work is HTTP, on CPU.
 */
function scaling(s: ServiceName, queues: string[]): Manifest[] {
  const target = { scaleTargetRef: { name: s }, minReplicaCount: 2, maxReplicaCount: 6 }
  if (s === 'order') {
    return [
      {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: s, labels: labels(s, 'service') },
        spec: {
          ...target,
          triggers: [{ type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } }],
        },
      },
    ]
  }
  return [
    {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: s, labels: labels(s, 'service') },
      spec: {
        ...target,
        triggers: queues.map((queue) => ({
          type: 'rabbitmq',
          authenticationRef: { name: 'keda-rabbitmq' },
          // 50 ready messages per replica: about half a second of work at the measured rates.
          metadata: { protocol: 'http', queueName: queue, mode: 'QueueLength', value: '50' },
        })),
      },
    },
  ]
}

function serviceManifests(s: ServiceName, queues: string[]): Manifest[] {
  const extraEnv =
    s === 'inventory'
      ? [{ name: 'SEED_CATALOGUE', value: 'false' }]
      : s === 'shipment'
        ? [{ name: 'CARRIER_ACCOUNT', value: 'set-me-in-the-overlay' }]
        : []
  const selector = { 'app.kubernetes.io/name': s, 'app.kubernetes.io/component': 'service' }
  return [
    deployment(s, extraEnv),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: s, labels: labels(s, 'service') },
      spec: { selector, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: s, labels: labels(s, 'service') },
      spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
    },
    migrationJob(s),
    ...networkPolicies(s),
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: s, labels: labels(s, 'service') },
      spec: {
        selector: { matchLabels: selector },
        endpoints: [{ port: 'http', path: '/metrics', interval: '30s' }],
      },
    },
    ...scaling(s, queues),
    {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: dbCluster(s), labels: labels(dbCluster(s), 'database') },
      spec: {
        instances: 3,
        imageName: 'ghcr.io/cloudnative-pg/postgresql:17.6',
        // One database and one owner role per cluster: the service's role reaches no other data.
        bootstrap: { initdb: { database: `${s}_service`, owner: `${s}_service` } },
        enableSuperuserAccess: false,
        storage: { size: '10Gi' },
        // Per-role session limits (statement_timeout, lock_timeout, ...) belong in postgresql.parameters
        // or the role; they are decided with the database's owners, not here.
        postgresql: { parameters: { max_connections: '200' } },
        monitoring: { enablePodMonitor: true },
      },
    },
  ]
}

/** The RabbitMQ cluster, its vhost, exchange and policy, and the NetworkPolicy around it. */
function rabbitmqManifests(): Manifest[] {
  const services = ['order', 'payment', 'inventory', 'shipment']
  return [
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'RabbitmqCluster',
      metadata: { name: RABBITMQ, labels: labels(RABBITMQ, 'broker') },
      spec: {
        replicas: 3,
        image: 'rabbitmq:4.1.4-management',
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1Gi' } },
        persistence: { storage: '10Gi' },
        rabbitmq: { additionalPlugins: ['rabbitmq_prometheus'] },
      },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Vhost',
      metadata: { name: VHOST, labels: labels(RABBITMQ, 'topology') },
      spec: { name: VHOST, defaultQueueType: 'quorum', ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Exchange',
      metadata: { name: 'saga-events', labels: labels(RABBITMQ, 'topology') },
      spec: { name: EXCHANGE, vhost: VHOST, type: 'topic', durable: true, autoDelete: false, ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Policy',
      metadata: { name: 'handler-queues', labels: labels(RABBITMQ, 'topology') },
      spec: {
        name: 'handler-queues',
        vhost: VHOST,
        pattern: `^(${services.join('|')})\\.`,
        applyTo: 'queues',
        // Spread quorum queue leaders over the three nodes instead of the declaring client's node.
        definition: { 'queue-leader-locator': 'balanced' },
        ...cluster,
      },
    },
    // KEDA reads queue depths as a monitoring user: the secret keda-rabbitmq (made by a person, never
    // in these files) holds its username, password and `host`, the management URL with the vhost.
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'User',
      metadata: { name: 'keda', labels: labels(RABBITMQ, 'topology') },
      spec: { tags: ['monitoring'], importCredentialsSecret: { name: 'keda-rabbitmq' }, ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Permission',
      metadata: { name: 'keda', labels: labels(RABBITMQ, 'topology') },
      spec: {
        vhost: VHOST,
        userReference: { name: 'keda' },
        permissions: { configure: '', write: '', read: `^(${services.join('|')})\\.` },
        ...cluster,
      },
    },
    {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: { name: 'keda-rabbitmq', labels: labels(RABBITMQ, 'topology') },
      spec: { secretTargetRef: [{ parameter: 'host', name: 'keda-rabbitmq', key: 'host' }] },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: RABBITMQ, labels: labels(RABBITMQ, 'broker') },
      spec: {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: services.map((s) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': s } } })),
            ports: [{ protocol: 'TCP', port: 5672 }],
          },
          // Clustering (epmd, inter-node, CLI) between the broker's own pods.
          { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } } }] },
          // The operators (management API) and KEDA (queue depth) in their namespaces, Prometheus.
          {
            from: ['rabbitmq-system', 'keda', 'monitoring'].map((ns) => ({
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            })),
            ports: [
              { protocol: 'TCP', port: 15672 },
              { protocol: 'TCP', port: 15692 },
            ],
          },
        ],
      },
    },
  ]
}

/** Quorum queues, DLQs and bindings as the services declare them (same arguments, so no 406). */
function topologyManifests(definitions: TopologyDefinitions): Manifest[] {
  const objectName = (queue: string) => queue.replaceAll('.', '-')
  return [
    ...definitions.queues.map((q) => {
      const { 'x-queue-type': type, ...args } = q.arguments
      return {
        apiVersion: 'rabbitmq.com/v1beta1',
        kind: 'Queue',
        metadata: { name: objectName(q.name), labels: labels(RABBITMQ, 'topology') },
        spec: {
          name: q.name,
          vhost: VHOST,
          type,
          durable: true,
          autoDelete: false,
          arguments: args,
          ...cluster,
        },
      }
    }),
    ...definitions.bindings.map((b) => ({
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Binding',
      // Named by queue and routing key: a batch recorder's queue has a binding per fact it records.
      metadata: {
        name: objectName(`${b.destination}.${b.routing_key}`),
        labels: labels(RABBITMQ, 'topology'),
      },
      spec: {
        source: b.source,
        destination: b.destination,
        destinationType: 'queue',
        routingKey: b.routing_key,
        vhost: VHOST,
        ...cluster,
      },
    })),
  ]
}

/** One user per service with broker-users.ts's permissions; credentials generated by the operator. */
function userManifests(): Manifest[] {
  return brokerUsers({ exchange: EXCHANGE }).flatMap((u) => [
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'User',
      metadata: { name: u.user, labels: labels(RABBITMQ, 'topology') },
      spec: { ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Permission',
      metadata: { name: u.user, labels: labels(RABBITMQ, 'topology') },
      spec: { vhost: VHOST, userReference: { name: u.user }, permissions: u.permissions, ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'TopicPermission',
      metadata: { name: u.user, labels: labels(RABBITMQ, 'topology') },
      spec: {
        vhost: VHOST,
        userReference: { name: u.user },
        permissions: { exchange: u.topic.exchange, write: u.topic.write, read: u.topic.read },
        ...cluster,
      },
    },
  ])
}

/** Every file of infra/k8s/base/generated: name -> its objects. */
export function baseFiles(topology: Record<ServiceName, TopologyDefinitions>): Record<string, Manifest[]> {
  const files: Record<string, Manifest[]> = {}
  for (const s of Object.keys(topology) as ServiceName[]) {
    files[`${s}.yaml`] = serviceManifests(
      s,
      topology[s].queues.map((q) => q.name).filter((name) => !name.endsWith('.dlq')),
    )
  }
  files['rabbitmq.yaml'] = rabbitmqManifests()
  files['rabbitmq-topology.yaml'] = [
    ...Object.values(topology).flatMap(topologyManifests),
    ...userManifests(),
  ]
  return files
}
