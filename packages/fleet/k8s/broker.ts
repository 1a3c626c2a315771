/**
 * The broker: a RabbitmqCluster, its vhost, exchange and policies, the quorum queues, DLQs and
 * bindings exactly as the services declare them, one user per service with broker-users.ts's
 * permissions, KEDA's monitoring user and its TriggerAuthentication, and the NetworkPolicy around it.
 */
import type { TopologyDefinitions } from '@saga/messaging/parts'
import { SERVICES } from '../src/bootstrap.js'
import { brokerUsers } from '../src/broker-users.js'
import { BROKER_REPLICAS, EXCHANGE, labels, meta, RABBITMQ, VHOST, type Manifest } from './common.js'

const cluster = { rabbitmqClusterReference: { name: RABBITMQ } }
const topology = (name: string) => meta(name, 'topology', RABBITMQ)

/** A RabbitMQ policy as the broker's definitions (and the topology operator's Policy) hold it. */
export interface BrokerPolicy {
  name: string
  pattern: string
  'apply-to': 'queues'
  priority: number
  definition: Record<string, string | number>
}

/**
 * The deliveries after which a dead-letter queue drops a message (it has no dead-letter exchange of
 * its own). RabbitMQ 4.0 gives every quorum queue without the argument a limit of 20, and 4.0 to 4.2
 * count each time a message is handed out, so 20 listings of the DLQs (`order dlq list`, `order where`
 * read every message and give it back) would drop a dead-lettered message. A bound this large keeps
 * them for good on every version; -1 ("no limit") is refused in a 3.x policy, and as a 3.x queue
 * argument drops the message at its first return (both seen on 3.10, docs/deploy.md).
 */
export const DEAD_LETTER_QUEUE_DELIVERY_LIMIT = 1_000_000

/**
 * The vhost's policies: quorum queue leaders spread over the nodes (not all on the node of the
 * service that declared first), and the dead-letter queues' delivery limit. One policy applies to a
 * queue (the highest priority), so the DLQ policy repeats the leader locator.
 */
export function brokerPolicies(): BrokerPolicy[] {
  const services = SERVICES.join('|')
  const balanced = { 'queue-leader-locator': 'balanced' }
  return [
    {
      name: 'handler-queues',
      pattern: `^(${services})\\.`,
      'apply-to': 'queues',
      priority: 0,
      definition: balanced,
    },
    {
      name: 'dead-letter-queues',
      pattern: `^(${services})\\..+\\.dlq$`,
      'apply-to': 'queues',
      priority: 1,
      definition: { ...balanced, 'delivery-limit': DEAD_LETTER_QUEUE_DELIVERY_LIMIT },
    },
  ]
}

function networkPolicy(): Manifest {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(RABBITMQ, 'broker'),
    spec: {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: SERVICES.map((s) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': s } } })),
          ports: [{ protocol: 'TCP', port: 5672 }],
        },
        // Clustering (epmd, inter-node, CLI) between the broker's own pods.
        { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': RABBITMQ } } }] },
        // The operators (management API), KEDA (queue depth) and Prometheus (15692, per object).
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
  }
}

/**
 * KEDA reads queue depths as the `keda` monitoring user. The topology operator generates its
 * credentials into the Secret `keda-user-credentials`; the TriggerAuthentication maps its username
 * and password (KEDA 2.16 or later), and each trigger names the management URL without credentials.
 */
function kedaManifests(): Manifest[] {
  const credentials = 'keda-user-credentials'
  return [
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'User',
      metadata: topology('keda'),
      spec: { tags: ['monitoring'], ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Permission',
      metadata: topology('keda'),
      spec: {
        vhost: VHOST,
        userReference: { name: 'keda' },
        permissions: { configure: '', write: '', read: `^(${SERVICES.join('|')})\\.` },
        ...cluster,
      },
    },
    {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: topology('keda-rabbitmq'),
      spec: {
        secretTargetRef: [
          { parameter: 'username', name: credentials, key: 'username' },
          { parameter: 'password', name: credentials, key: 'password' },
        ],
      },
    },
  ]
}

/** The RabbitMQ cluster, its vhost, exchange and policies, KEDA's user, and the NetworkPolicy around it. */
export function brokerManifests(): Manifest[] {
  return [
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'RabbitmqCluster',
      metadata: { name: RABBITMQ, labels: labels(RABBITMQ, 'broker') },
      spec: {
        replicas: BROKER_REPLICAS,
        image: 'rabbitmq:4.1.4-management',
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '1Gi' } },
        persistence: { storage: '10Gi' },
        rabbitmq: { additionalPlugins: ['rabbitmq_prometheus'] },
      },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Vhost',
      metadata: topology(VHOST),
      spec: { name: VHOST, defaultQueueType: 'quorum', ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Exchange',
      metadata: topology('saga-events'),
      spec: { name: EXCHANGE, vhost: VHOST, type: 'topic', durable: true, autoDelete: false, ...cluster },
    },
    ...brokerPolicies().map((p) => ({
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Policy',
      metadata: topology(p.name),
      spec: {
        name: p.name,
        vhost: VHOST,
        pattern: p.pattern,
        applyTo: p['apply-to'],
        priority: p.priority,
        definition: p.definition,
        ...cluster,
      },
    })),
    ...kedaManifests(),
    networkPolicy(),
  ]
}

/** Quorum queues, DLQs and bindings as the services declare them (same arguments, so no 406). */
export function topologyManifests(definitions: TopologyDefinitions): Manifest[] {
  const objectName = (queue: string) => queue.replaceAll('.', '-')
  return [
    ...definitions.queues.map((q) => {
      const { 'x-queue-type': type, ...args } = q.arguments
      return {
        apiVersion: 'rabbitmq.com/v1beta1',
        kind: 'Queue',
        metadata: topology(objectName(q.name)),
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
      metadata: topology(objectName(`${b.destination}.${b.routing_key}`)),
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
export function userManifests(): Manifest[] {
  return brokerUsers({ exchange: EXCHANGE }).flatMap((u) => [
    { apiVersion: 'rabbitmq.com/v1beta1', kind: 'User', metadata: topology(u.user), spec: { ...cluster } },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'Permission',
      metadata: topology(u.user),
      spec: { vhost: VHOST, userReference: { name: u.user }, permissions: u.permissions, ...cluster },
    },
    {
      apiVersion: 'rabbitmq.com/v1beta1',
      kind: 'TopicPermission',
      metadata: topology(u.user),
      spec: {
        vhost: VHOST,
        userReference: { name: u.user },
        permissions: { exchange: u.topic.exchange, write: u.topic.write, read: u.topic.read },
        ...cluster,
      },
    },
  ])
}
