import path from 'node:path'
import { OTLP_ENDPOINT_RULE, urlSettingProblems } from '../url-setting.js'

/** The OTLP endpoint variables this fleet reads or lets the SDK read; each must be an http(s) URL. */
const ENDPOINT_VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] as const

/**
 * What is wrong with the OTLP endpoint variables that are set and not blank, one line each
 * (`OTEL_EXPORTER_OTLP_ENDPOINT: the port is out of range: ...`), never quoting a value (it may hold
 * credentials). The SDK itself drops a malformed endpoint without a word, so spans would silently go
 * nowhere.
 */
export function telemetryProblems(env: NodeJS.ProcessEnv): string[] {
  const set = Object.fromEntries(
    ENDPOINT_VARIABLES.filter((name) => (env[name] ?? '').trim() !== '').map((name) => [name, env[name]]),
  )
  return urlSettingProblems(
    set,
    Object.fromEntries(Object.keys(set).map((name) => [name, OTLP_ENDPOINT_RULE])),
  )
}

/**
 * Whether the process should export traces: an OTLP endpoint is configured
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` for traces alone) and
 * neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns it off. Otherwise the SDK
 * is never loaded, and @opentelemetry/api stays the no-op it is without one.
 */
export function telemetryEnabled(env: NodeJS.ProcessEnv): boolean {
  const endpoint = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim()
  if (endpoint === '') return false
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false
  return (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() !== 'none'
}

/**
 * The service name for the OTel resource when `OTEL_SERVICE_NAME` is not set: `<name>` of an entry
 * point `.../services/<name>/dist/server.js`, else undefined (the SDK then says
 * `unknown_service:node`). Example: `serviceNameOf('/app/services/order/dist/server.js') === 'order'`.
 */
export function serviceNameOf(entry: string | undefined): string | undefined {
  if (!entry) return undefined
  const parts = path.resolve(entry).split(path.sep)
  const at = parts.lastIndexOf('services')
  return at >= 0 && parts[at + 1] ? parts[at + 1] : undefined
}

/**
 * The defaults this fleet sets before the SDK reads the environment, each only when unset:
 * traces are exported over OTLP; metrics stay on Prometheus `/metrics` and logs on stdout, so the
 * SDK's OTLP metric and log exporters (its defaults) are off; the service name comes from the
 * entry point.
 */
export function telemetryDefaults(env: NodeJS.ProcessEnv, entry: string | undefined): Record<string, string> {
  const defaults: Record<string, string> = {}
  if (!env.OTEL_METRICS_EXPORTER) defaults.OTEL_METRICS_EXPORTER = 'none'
  if (!env.OTEL_LOGS_EXPORTER) defaults.OTEL_LOGS_EXPORTER = 'none'
  const name = serviceNameOf(entry)
  if (!env.OTEL_SERVICE_NAME && name) defaults.OTEL_SERVICE_NAME = name
  return defaults
}
