import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { SERVICES } from '../src/bootstrap.js'
import { DEFAULT_PORTS } from '../src/start-env.js'

// The compose profile `observability`, checked without a Docker engine: every file it mounts exists,
// the configurations it mounts agree with each other and with the services (ports, job names,
// datasource uid), Prometheus's parses with promtool where installed (CI installs Debian's prometheus).

const root = fileURLToPath(new URL('../../../', import.meta.url))
const read = (file: string) => readFileSync(join(root, file), 'utf8')
const promtool = spawnSync('promtool', ['--version']).status === 0

interface ComposeService {
  image?: string
  command?: string[]
  profiles?: string[]
  ports?: string[]
  volumes?: string[]
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }>
  environment?: Record<string, string>
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>
  volumes: Record<string, unknown>
}
const PROFILE = ['otel-collector', 'jaeger', 'prometheus', 'grafana'] as const
const service = (name: string): ComposeService => {
  const s = compose.services[name]
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`)
  return s
}

/** The bind mounts of a compose service: container path -> host path (relative to the repo). */
function bindMounts(name: string): Map<string, string> {
  const mounts = new Map<string, string>()
  for (const volume of service(name).volumes ?? []) {
    const [source, target] = volume.split(':')
    if (source?.startsWith('./') && target) mounts.set(target, source.slice(2))
  }
  return mounts
}

/** The host file a container path of `name` shows, through its bind mounts; undefined when none does. */
function hostPath(name: string, containerPath: string): string | undefined {
  for (const [target, source] of bindMounts(name)) {
    if (containerPath === target) return source
    if (containerPath.startsWith(`${target}/`)) return join(source, containerPath.slice(target.length + 1))
  }
  return undefined
}

/** `host:port` of a URL or of a bare `host:port` endpoint. */
const hostPort = (endpoint: string): string =>
  endpoint.includes('://') ? new URL(endpoint).host : endpoint.replace(/\/.*$/, '')

/**
 * A value of the compose file as Compose resolves it in `env`: `${NAME}`, `${NAME:-default}`,
 * `${NAME-default}`, `${NAME:+alternative}` and `${NAME+alternative}`; `$$` is a literal `$`
 * (https://docs.docker.com/reference/compose-file/interpolation/).
 */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-+])([^}]*))?\}/g,
    (match, name, colon, op, word) => {
      if (match === '$$') return '$'
      const v = env[name as string]
      const set = colon === ':' ? v !== undefined && v !== '' : v !== undefined
      if (op === '-') return set ? v! : (word as string)
      if (op === '+') return set ? (word as string) : ''
      return v ?? ''
    },
  )
}

describe('docker-compose.yml, profile observability', () => {
  it('when resolved, then the collector, Jaeger, Prometheus and Grafana are in it, and only in it, at current majors', () => {
    for (const name of PROFILE) {
      expect(service(name).profiles, name).toEqual(['observability'])
      expect(service(name).image, name).toMatch(/^[a-z/-]+:v?\d+\.\d+\.\d+$/)
    }
    // Jaeger 1 reached its end of life on 2025-12-31; Jaeger 2 is the collector-based line.
    expect(service('jaeger').image).toMatch(/^jaegertracing\/jaeger:2\./)
    expect(service('prometheus').image).toMatch(/^prom\/prometheus:v3\./)
    // A service outside the profile must not depend on one inside it (compose refuses to start it).
    for (const [name, s] of Object.entries(compose.services)) {
      if (s.profiles?.includes('observability')) continue
      for (const dependency of Object.keys(s.depends_on ?? {}))
        expect(PROFILE as readonly string[], `${name} -> ${dependency}`).not.toContain(dependency)
    }
  })

  it('when a profile service mounts a file from the repository, then the file exists', () => {
    let count = 0
    for (const name of PROFILE) {
      for (const [target, source] of bindMounts(name)) {
        expect(existsSync(join(root, source)), `${name}: ${source} -> ${target}`).toBe(true)
        count++
      }
    }
    expect(count).toBeGreaterThanOrEqual(6)
  })

  it('when the profile is on, then the services load the SDK and send OTLP to the collector it receives on; when off, they export nothing', () => {
    expect(interpolate('a${X:-d}${Y:+alt}${Z}$$', { Y: '1' })).toBe('adalt$')
    const collector = parse(read(hostPath('otel-collector', '/etc/otelcol/config.yaml')!)) as Collector
    const httpReceiver = collector.receivers.otlp?.protocols?.http?.endpoint
    expect(httpReceiver).toBeDefined()
    for (const name of SERVICES) {
      const s = service(name)
      expect(s.command, name).toEqual([
        'node',
        '--import',
        '@saga/service-kit/telemetry',
        `services/${name}/dist/server.js`,
      ])
      const configured = s.environment?.OTEL_EXPORTER_OTLP_ENDPOINT ?? ''
      // Tracing is off (no endpoint: the SDK is not loaded) unless the profile is on.
      expect(interpolate(configured, {}), name).toBe('')
      const endpoint = new URL(interpolate(configured, { COMPOSE_PROFILES: 'observability' }))
      expect(endpoint.hostname, name).toBe('otel-collector')
      expect(endpoint.port, name).toBe(hostPort(httpReceiver!).split(':')[1])
      expect(['http/protobuf', 'http/json'], name).toContain(s.environment?.OTEL_EXPORTER_OTLP_PROTOCOL)
    }
    expect(service('otel-collector').command).toEqual(['--config=/etc/otelcol/config.yaml'])
  })
})

describe('docker-compose.yml, profile observability: the collector', () => {
  it('when the collector config is read, then every pipeline uses defined components and traces reach Jaeger', () => {
    const collector = parse(read(hostPath('otel-collector', '/etc/otelcol/config.yaml')!)) as Collector
    // The core distribution (otel/opentelemetry-collector) holds these; anything else needs -contrib.
    const core: Record<Section, string[]> = {
      receivers: ['otlp'],
      processors: ['batch', 'memory_limiter'],
      exporters: ['otlp_grpc', 'otlp_http', 'otlp', 'otlphttp', 'debug'],
      extensions: ['health_check', 'zpages', 'pprof'],
    }
    for (const id of collector.service.extensions ?? []) expect(collector.extensions ?? {}).toHaveProperty(id)
    for (const section of Object.keys(core) as Section[]) {
      for (const id of Object.keys(collector[section] ?? {}))
        expect(core[section], `${section} ${id}`).toContain(id.split('/')[0])
    }
    const traces = collector.service.pipelines.traces
    expect(traces).toBeDefined()
    for (const section of ['receivers', 'processors', 'exporters'] as const) {
      expect(traces![section].length, section).toBeGreaterThan(0)
      for (const id of traces![section])
        expect(collector[section] ?? {}, `${section} ${id}`).toHaveProperty(id)
    }
    // memory_limiter first, as the collector's documentation asks.
    expect(traces!.processors[0]).toBe('memory_limiter')
    for (const [id, exporter] of Object.entries(collector.exporters ?? {})) {
      if (!id.startsWith('otlp')) continue
      const [host, port] = hostPort(exporter.endpoint).split(':')
      expect(Object.keys(compose.services), id).toContain(host)
      expect(service(host!).profiles).toEqual(['observability'])
      expect(port, `${id}: Jaeger's OTLP gRPC port`).toBe('4317')
    }
    // Receivers bound to every interface: the default (localhost) is unreachable from other containers.
    for (const protocol of Object.values(collector.receivers.otlp?.protocols ?? {}))
      expect(protocol.endpoint).toMatch(/^0\.0\.0\.0:\d+$/)
  })
})

describe('docker-compose.yml, profile observability: Prometheus and Grafana', () => {
  it('when Prometheus scrapes, then it has one job per service at its compose port, and RabbitMQ per object', () => {
    const config = parse(read(hostPath('prometheus', '/etc/prometheus/prometheus.yml')!)) as Prometheus
    const jobs = new Map(config.scrape_configs.map((job) => [job.job_name, job]))
    for (const name of SERVICES) {
      const port = DEFAULT_PORTS[name]
      expect(service(name).environment?.PORT, name).toBe(String(port))
      expect(
        jobs.get(name)?.static_configs.flatMap((c) => c.targets),
        name,
      ).toEqual([`${name}:${port}`])
    }
    const rabbit = jobs.get('rabbitmq')
    expect(rabbit?.metrics_path).toBe('/metrics/per-object')
    expect(rabbit?.static_configs.flatMap((c) => c.targets)).toEqual(['rabbitmq:15692'])
    // Management (UI, KEDA's queue depths) and Prometheus only: no plugin RabbitMQ 4 no longer ships.
    expect(read('infra/rabbitmq/enabled_plugins').trim()).toBe('[rabbitmq_management,rabbitmq_prometheus].')
    // The alert rules, loaded relative to the config in the container and present there.
    expect(config.rule_files).toEqual(['alerts.yml'])
    expect(hostPath('prometheus', '/etc/prometheus/alerts.yml')).toBe(
      'infra/observability/prometheus/alerts.yml',
    )
  })

  it.skipIf(!promtool)(
    'when promtool checks the Prometheus config, then it and its rule file are valid',
    () => {
      const out = execFileSync('promtool', ['check', 'config', 'prometheus.yml'], {
        cwd: join(root, 'infra/observability/prometheus'),
        encoding: 'utf8',
      })
      expect(out).toContain('SUCCESS: 1 rule files found')
    },
  )

  it('when Grafana provisions, then its files exist, and the dashboard defaults to the provisioned Prometheus', () => {
    const datasourcesDir = hostPath('grafana', '/etc/grafana/provisioning/datasources')!
    const dashboardsDir = hostPath('grafana', '/etc/grafana/provisioning/dashboards')!
    expect(statSync(join(root, datasourcesDir)).isDirectory()).toBe(true)
    const { datasources } = parse(read(join(datasourcesDir, 'datasources.yml'))) as {
      datasources: { uid: string; type: string; url: string; isDefault?: boolean }[]
    }
    const prometheus = datasources.find((d) => d.type === 'prometheus')!
    expect(prometheus.isDefault).toBe(true)
    expect(hostPort(prometheus.url)).toBe('prometheus:9090')
    expect(hostPort(datasources.find((d) => d.type === 'jaeger')!.url)).toBe('jaeger:16686')

    const { providers } = parse(read(join(dashboardsDir, 'dashboards.yml'))) as {
      providers: { type: string; options: { path: string } }[]
    }
    const dashboards = providers.flatMap((p) =>
      [...bindMounts('grafana')].filter(([target]) => target.startsWith(`${p.options.path}/`)),
    )
    expect(dashboards.map(([, source]) => source)).toEqual(['infra/observability/grafana/saga-fleet.json'])
    expect(service('grafana').environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(dashboards[0]![0])

    const dashboard = JSON.parse(read('infra/observability/grafana/saga-fleet.json')) as {
      templating: { list: { name: string; type: string; query?: string; current?: { value: string } }[] }
      panels: { datasource: { type: string; uid: string } }[]
    }
    const variable = dashboard.templating.list.find((v) => v.type === 'datasource')!
    expect(variable.query).toBe('prometheus')
    expect(variable.current?.value).toBe(prometheus.uid)
    for (const panel of dashboard.panels)
      expect([prometheus.uid, `\${${variable.name}}`]).toContain(panel.datasource.uid)
  })
})

type Section = 'receivers' | 'processors' | 'exporters' | 'extensions'
interface Collector {
  receivers: Record<string, { protocols?: Record<string, { endpoint: string }> }>
  processors?: Record<string, unknown>
  exporters?: Record<string, { endpoint: string }>
  extensions?: Record<string, unknown>
  service: {
    extensions?: string[]
    pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }>
  }
}
interface Prometheus {
  rule_files: string[]
  scrape_configs: { job_name: string; metrics_path?: string; static_configs: { targets: string[] }[] }[]
}
