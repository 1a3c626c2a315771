// What the rendered NetworkPolicies allow, read as the API defines them (networking.k8s.io/v1): a
// pod that no policy of a direction selects is open in that direction; a selected pod accepts what
// one of the selecting policies' rules allows, on a TCP port listed (by number or by the
// destination's named port) or on any port when none is listed. Only matchLabels selectors, which is
// all infra/k8s uses: a matchExpressions throws rather than be misread. No CNI is involved, so this
// is what the objects say, not what a cluster enforces.
import type { INetworkPolicy, INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1'
import type { K8sObject } from './k8s-render.js'

type Selector = { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }

/** A pod as the checks see it: namespace, labels and named container ports (name -> number). */
export interface PodAt {
  namespace: string
  labels: Record<string, string>
  ports: Record<string, number>
}

function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (selector?.matchExpressions?.length) throw new Error('matchExpressions is not read by this check')
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
}

/** Whether a rule's peer (from/to) names `pod`, for a policy in `namespace`. */
function peerMatches(peer: INetworkPolicyPeer, namespace: string, pod: PodAt): boolean {
  if (peer.ipBlock) return false
  const inNamespace = peer.namespaceSelector
    ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': pod.namespace })
    : pod.namespace === namespace
  return inNamespace && (peer.podSelector === undefined || selects(peer.podSelector, pod.labels))
}

type Direction = 'Ingress' | 'Egress'

/** Whether the policies of `subject` in `direction` let it talk with `peer` on `destination`'s TCP `port`. */
function sideAllows(
  policies: INetworkPolicy[],
  direction: Direction,
  subject: PodAt,
  peer: PodAt,
  destination: PodAt,
  port: number,
): boolean {
  const selecting = policies.filter((p) => {
    const types = p.spec?.policyTypes ?? (p.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress'])
    return (
      p.metadata?.namespace === subject.namespace &&
      selects(p.spec?.podSelector, subject.labels) &&
      types.includes(direction)
    )
  })
  if (selecting.length === 0) return true
  return selecting.some((p) => {
    const rules =
      direction === 'Ingress'
        ? (p.spec?.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports }))
        : (p.spec?.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }))
    return rules.some(
      (r) =>
        (!r.peers?.length || r.peers.some((x) => peerMatches(x, subject.namespace, peer))) &&
        (!r.ports?.length ||
          r.ports.some(
            (x) =>
              (x.protocol ?? 'TCP') === 'TCP' &&
              (x.port === undefined ||
                x.port === port ||
                (typeof x.port === 'string' && destination.ports[x.port] === port)),
          )),
    )
  })
}

/** Whether the NetworkPolicies among `objects` let `from` open a TCP connection to `to` on `port`. */
export function allows(objects: K8sObject[], from: PodAt, to: PodAt, port: number): boolean {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[]
  return (
    sideAllows(policies, 'Egress', from, to, to, port) && sideAllows(policies, 'Ingress', to, from, to, port)
  )
}

/** The pod a rendered Deployment makes: its template's labels, its main container's named ports. */
export function podOfDeployment(deployment: K8sObject, container = 'service'): PodAt {
  const template = (
    deployment.spec as {
      template: {
        metadata: { labels: Record<string, string> }
        spec: { containers: Array<{ name: string; ports?: Array<{ name?: string; containerPort: number }> }> }
      }
    }
  ).template
  const main = template.spec.containers.find((c) => c.name === container)
  return {
    namespace: deployment.metadata.namespace ?? 'default',
    labels: template.metadata.labels,
    ports: Object.fromEntries(
      (main?.ports ?? []).flatMap((p) => (p.name ? [[p.name, p.containerPort]] : [])),
    ),
  }
}
