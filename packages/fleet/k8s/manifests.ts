/**
 * The Kubernetes base of infra/k8s, as data: per service its workload (workload.ts), its database
 * with backups and monitoring (database.ts); the saga console (console.ts); the broker with its topology and users (broker.ts); and
 * what the cluster's Prometheus and Grafana load (observability.ts). `generate.ts` writes it as YAML;
 * a test checks the committed files are what this produces, renders the overlays and validates every
 * object.
 */
import type { TopologyDefinitions } from '@saga/messaging/parts'
import type { ServiceName } from '../src/bootstrap.js'
import type { Manifest } from './common.js'
import { brokerManifests, topologyManifests, userManifests } from './broker.js'
import { consoleManifests } from './console.js'
import { backupStore, databaseManifests } from './database.js'
import { observabilityManifests } from './observability.js'
import { workloadManifests } from './workload.js'

export { EXCHANGE, NAMESPACE, RABBITMQ, VHOST, type Manifest } from './common.js'

/** Every file of infra/k8s/base/generated: name -> its objects. */
export function baseFiles(topology: Record<ServiceName, TopologyDefinitions>): Record<string, Manifest[]> {
  const files: Record<string, Manifest[]> = {}
  for (const s of Object.keys(topology) as ServiceName[]) {
    const queues = topology[s].queues.map((q) => q.name).filter((name) => !name.endsWith('.dlq'))
    files[`${s}.yaml`] = [...workloadManifests(s, queues), ...databaseManifests(s)]
  }
  files['console.yaml'] = consoleManifests()
  files['backup.yaml'] = [backupStore()]
  files['rabbitmq.yaml'] = brokerManifests()
  files['rabbitmq-topology.yaml'] = [
    ...Object.values(topology).flatMap(topologyManifests),
    ...userManifests(),
  ]
  files['observability.yaml'] = observabilityManifests()
  return files
}
