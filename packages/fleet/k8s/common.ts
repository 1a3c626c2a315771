/** What every module of the Kubernetes base shares: the object type, the fixed names and the labels. */
import type { ServiceName } from '../src/bootstrap.js'

/** A Kubernetes object as plain data. */
export type Manifest = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: unknown }

export const RABBITMQ = 'saga-rabbitmq'
/** Broker nodes of the RabbitmqCluster; every quorum queue has a replica on each (3.x and 4.x default). */
export const BROKER_REPLICAS = 3
export const VHOST = 'saga'
export const EXCHANGE = 'saga.events'
/**
 * The namespace written into URLs that other namespaces resolve (KEDA's view of the management API);
 * each overlay replaces it with its own (its `replacements`).
 */
export const NAMESPACE = 'saga'

/** The recommended labels of one object: name, component, and part-of `saga`. */
export const labels = (name: string, component: string) => ({
  'app.kubernetes.io/name': name,
  'app.kubernetes.io/component': component,
  'app.kubernetes.io/part-of': 'saga',
})

/** `metadata` of an object named `name`, labelled as `labelName` in `component`. */
export const meta = (name: string, component: string, labelName = name) => ({
  name,
  labels: labels(labelName, component),
})

/** The CloudNativePG cluster of a service: `<service>-db`. */
export const dbCluster = (s: ServiceName) => `${s}-db`

/**
 * The Secret a person creates per environment with the admin token (key `token`, at least 16
 * characters; docs/deploy.md, "The console and ADMIN_TOKEN"). Never in the manifests.
 */
export const ADMIN_SECRET = 'saga-admin'

/**
 * ADMIN_TOKEN from the Secret `saga-admin`, optional: without the Secret the variable is unset and
 * every admin write is refused (read-only), the pod starts all the same. Read at the container's
 * start, so a created or rotated Secret takes effect with the next rollout.
 */
export const adminTokenEnv = () => ({
  name: 'ADMIN_TOKEN',
  valueFrom: { secretKeyRef: { name: ADMIN_SECRET, key: 'token', optional: true } },
})

/**
 * The Secret a person may create with the console's viewer token (key `token`, at least 16
 * characters, not the admin token; docs/deploy.md, "The console and ADMIN_TOKEN"). Never in the manifests.
 */
export const VIEWER_SECRET = 'saga-console-viewer'

/**
 * CONSOLE_VIEWER_TOKEN from the Secret `saga-console-viewer`, optional: without it nobody signs in
 * as a viewer and the console's reads stay open; with it, viewers sign in to read and reads need a
 * session. The console's own setting: never given to the four services.
 */
export const viewerTokenEnv = () => ({
  name: 'CONSOLE_VIEWER_TOKEN',
  valueFrom: { secretKeyRef: { name: VIEWER_SECRET, key: 'token', optional: true } },
})

/** Pods run as the image's unprivileged user (uid 1000 = node), under the runtime's default seccomp. */
export const podSecurity = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
}

/** Read-only root, no privileges: what Pod Security's `restricted` level asks of a container. */
export const containerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
}

/** An HTTP probe of `path` on the container's `http` port, every 10 s, 3 s to answer. */
export const httpProbe = (path: string, failureThreshold: number) => ({
  httpGet: { path, port: 'http' },
  periodSeconds: 10,
  timeoutSeconds: 3,
  failureThreshold,
})

/** An egress rule to the cluster's DNS (kube-system, port 53 over UDP and TCP). */
export const dnsEgress = {
  to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
  ports: [
    { protocol: 'UDP', port: 53 },
    { protocol: 'TCP', port: 53 },
  ],
}

/**
 * The broker nodes the services try in turn (AMQP_URL's comma-separated list), as the cluster
 * operator names its pods behind the headless Service `<cluster>-nodes`:
 * `saga-rabbitmq-server-<i>.saga-rabbitmq-nodes`; the same list as docker-compose.cluster.yml's
 * rabbit-1..3. Each connection of @saga/messaging starts at a node picked from a hash of its host,
 * process and connection name, so the replicas' connections spread over the nodes.
 */
export const BROKER_HOSTS: readonly string[] = Array.from(
  { length: BROKER_REPLICAS },
  (_, i) => `${RABBITMQ}-server-${i}.${RABBITMQ}-nodes`,
)
