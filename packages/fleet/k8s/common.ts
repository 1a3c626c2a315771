/** What every module of the Kubernetes base shares: the object type, the fixed names and the labels. */
import type { ServiceName } from '../src/bootstrap.js'

/** A Kubernetes object as plain data. */
export type Manifest = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: unknown }

export const RABBITMQ = 'saga-rabbitmq'
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
