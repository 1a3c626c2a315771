/**
 * What the cluster's Prometheus Operator and Grafana load, from the same files the compose profile
 * mounts: the alert rules (infra/observability/prometheus/alerts.yml) as a PrometheusRule, the
 * dashboard (infra/observability/grafana/saga-fleet.json) as a ConfigMap Grafana's sidecar picks up,
 * and a ServiceMonitor for RabbitMQ's per-object metrics (queue depths for the DLQ alert, the
 * dashboard and the picture of what KEDA scales on).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { meta, RABBITMQ, type Manifest } from './common.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
/** The alert rules, one source for compose and the cluster. */
export const ALERT_RULES_FILE = 'infra/observability/prometheus/alerts.yml'
/** The dashboard, one source for compose and the cluster. */
export const DASHBOARD_FILE = 'infra/observability/grafana/saga-fleet.json'
/**
 * The label kube-prometheus-stack's Grafana sidecar looks for on ConfigMaps (its default
 * `sidecar.dashboards.label`, value "1").
 */
export const DASHBOARD_LABEL = 'grafana_dashboard'

/** The PrometheusRule holding alerts.yml's groups as they are. */
function prometheusRule(): Manifest {
  const rules = parse(readFileSync(join(root, ALERT_RULES_FILE), 'utf8')) as { groups: unknown[] }
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: meta('saga-alerts', 'monitoring', 'saga'),
    spec: { groups: rules.groups },
  }
}

/** The dashboard JSON, byte for byte, in a ConfigMap labelled for Grafana's sidecar. */
function dashboardConfigMap(): Manifest & { data: Record<string, string> } {
  const metadata = meta('saga-fleet-dashboard', 'monitoring', 'saga')
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...metadata, labels: { ...metadata.labels, [DASHBOARD_LABEL]: '1' } },
    data: { 'saga-fleet.json': readFileSync(join(root, DASHBOARD_FILE), 'utf8') },
  }
}

/**
 * RabbitMQ's Prometheus plugin on the Service the cluster operator makes (`prometheus` port, 15692):
 * `/metrics/per-object` gives a series per queue (`rabbitmq_queue_messages{queue}`), which the
 * aggregated `/metrics` does not. The headless `-nodes` Service has no such port, so each node is
 * scraped once, through the client Service's endpoints.
 */
function rabbitmqServiceMonitor(): Manifest {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: meta(RABBITMQ, 'broker'),
    spec: {
      selector: {
        matchLabels: { 'app.kubernetes.io/name': RABBITMQ, 'app.kubernetes.io/component': 'rabbitmq' },
      },
      endpoints: [{ port: 'prometheus', path: '/metrics/per-object', interval: '30s', scrapeTimeout: '25s' }],
    },
  }
}

/** The PrometheusRule, the dashboard ConfigMap and RabbitMQ's ServiceMonitor. */
export function observabilityManifests(): Manifest[] {
  return [prometheusRule(), dashboardConfigMap(), rabbitmqServiceMonitor()]
}
