/**
 * The saga console (services/console): a Deployment of the one image running
 * `node services/console/dist/server.js`, its Service on 3005, and the NetworkPolicy that lets it
 * read the four services' HTTP APIs and lets nothing in. People open it with `kubectl port-forward`,
 * which the usual CNIs do not filter (the kubelet connects inside the pod); an overlay that serves it through an ingress adds a policy for
 * that (docs/deploy.md, "The console and ADMIN_TOKEN").
 */
import { SERVICES } from '../src/bootstrap.js'
import { DEFAULT_CONSOLE_PORT, DEFAULT_PORTS } from '../src/start-env.js'
import {
  adminTokenEnv,
  viewerTokenEnv,
  containerSecurity,
  dnsEgress,
  httpProbe,
  labels,
  meta,
  podSecurity,
  type Manifest,
} from './common.js'
import { GRACE_SECONDS, PRE_STOP_SECONDS, SERVICE_CONTAINER } from './workload.js'

/** The console's Deployment, Service and NetworkPolicy name, and its `app.kubernetes.io/name`. */
export const CONSOLE = 'console'
/** Its `app.kubernetes.io/component`: not `service`, so what overlays and components do to the four services' pods leaves it alone. */
export const CONSOLE_COMPONENT = 'console'

const selector = { 'app.kubernetes.io/name': CONSOLE, 'app.kubernetes.io/component': CONSOLE_COMPONENT }

/** Each service's URL by its cluster Service (port 80 in front of the service's `http` port). */
const serviceUrls = () => SERVICES.map((s) => ({ name: `${s.toUpperCase()}_URL`, value: `http://${s}` }))

function container() {
  return {
    name: SERVICE_CONTAINER,
    image: 'saga/service',
    command: ['node', 'services/console/dist/server.js'],
    ports: [{ name: 'http', containerPort: DEFAULT_CONSOLE_PORT }],
    env: [
      { name: 'CONSOLE_PORT', value: String(DEFAULT_CONSOLE_PORT) },
      { name: 'HOST', value: '0.0.0.0' },
      ...serviceUrls(),
      // Without the Secret the console is read-only, as the services are.
      adminTokenEnv(),
      // Without it no viewer signs in and reads stay open; with it reads need a session.
      viewerTokenEnv(),
    ],
    securityContext: containerSecurity,
    resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    startupProbe: httpProbe('/health/live', 30),
    livenessProbe: httpProbe('/health/live', 3),
    readinessProbe: httpProbe('/health/ready', 2),
    lifecycle: { preStop: { exec: { command: ['sleep', String(PRE_STOP_SECONDS)] } } },
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  }
}

/**
 * One replica: each replica polls every service on its own, and the single poller is what keeps N
 * open tabs at the cost of one reader. A rollout starts the new pod before it stops the old one.
 */
function deployment(): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(CONSOLE, CONSOLE_COMPONENT),
    spec: {
      replicas: 1,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: labels(CONSOLE, CONSOLE_COMPONENT) },
        spec: {
          automountServiceAccountToken: false,
          securityContext: podSecurity,
          terminationGracePeriodSeconds: GRACE_SECONDS,
          containers: [container()],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  }
}

/**
 * Out: each service's pods on their HTTP port, and DNS; nothing else (no database, no broker: the
 * console reads the services over HTTP only). In: nothing.
 */
function networkPolicy(): Manifest {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(CONSOLE, CONSOLE_COMPONENT),
    spec: {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': CONSOLE } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        ...SERVICES.map((s) => ({
          to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': s } } }],
          ports: [{ protocol: 'TCP', port: DEFAULT_PORTS[s] }],
        })),
        dnsEgress,
      ],
    },
  }
}

/** The console's Deployment, its Service (3005 -> http) and its NetworkPolicy. */
export function consoleManifests(): Manifest[] {
  return [
    deployment(),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(CONSOLE, CONSOLE_COMPONENT),
      spec: {
        selector,
        ports: [{ name: 'http', port: DEFAULT_CONSOLE_PORT, targetPort: 'http' }],
      },
    },
    networkPolicy(),
  ]
}
