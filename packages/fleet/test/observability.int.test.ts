import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createSignals, messagingMetrics } from '@saga/messaging/parts'
import { testStats } from '@saga/messaging/testing'
import { FLEET_MESSAGING_NAMES } from '@saga/service-kit'
import { SERVICES } from '../src/bootstrap.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const rulesDir = path.join(root, 'infra/observability/prometheus')
const promtool = spawnSync('promtool', ['--version']).status === 0

interface Rule {
  alert: string
  expr: string
  annotations: Record<string, string>
}
const rules = (
  parse(fs.readFileSync(path.join(rulesDir, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules)
const runbook = fs.readFileSync(path.join(root, 'docs/runbook.md'), 'utf8')

interface Panel {
  title: string
  fieldConfig: { defaults: { unit?: string } }
  targets: { expr: string }[]
}
const dashboard = JSON.parse(
  fs.readFileSync(path.join(root, 'infra/observability/grafana/saga-fleet.json'), 'utf8'),
) as { panels: Panel[] }

/**
 * What a dashboard query measures: `seconds` when it reads a duration series (a `_seconds` gauge or
 * a `_seconds_bucket` quantile), `count` otherwise (rows, messages, rates of `_count` or `_total`).
 */
const measures = (expr: string): 'seconds' | 'count' =>
  /_seconds(_bucket)?\b/.test(expr.replace(/_seconds_(count|sum)\b/g, '')) ? 'seconds' : 'count'

// Where the fleet's series are named: a rule over a series nobody exports would never fire.
const sources = [
  'packages/service-kit/src/database-metrics.ts',
  'packages/service-kit/src/metrics.ts',
  'services/order/src/metrics.ts',
].map((file) => fs.readFileSync(path.join(root, file), 'utf8'))

// Messaging's series are data: its descriptors under the fleet's prefix, recorders included.
const messagingSeries = new Set(
  messagingMetrics(FLEET_MESSAGING_NAMES.metricPrefix, {
    stats: () => testStats(),
    health: () => ({ ok: true, areas: [] }),
    signals: createSignals(),
    recorders: true,
  }).map((metric) => metric.name),
)

/** The saga series an expression reads (label matchers, ranges and strings removed). */
const seriesOf = (expr: string): string[] =>
  (expr.replace(/\{[^}]*\}|\[[^\]]*\]|"[^"]*"/g, ' ').match(/[a-z_][a-z0-9_]*/g) ?? []).filter((w) =>
    w.startsWith('saga_'),
  )

/** Whether a service exports `name` (a histogram's _bucket/_sum/_count count as the histogram). */
const exported = (name: string): boolean => {
  const base = name.replace(/_(bucket|sum|count)$/, '')
  if (messagingSeries.has(base)) return true
  return sources.some((source) => source.includes(`'${base}'`) || source.includes(`  ${base}:`))
}

describe('Prometheus alert rules (infra/observability/prometheus)', () => {
  it.skipIf(!promtool)(
    'when promtool tests the rules, then every alert fires on its scenario and not on the healthy series',
    () => {
      const out = execFileSync('promtool', ['test', 'rules', 'alerts.test.yml'], {
        cwd: rulesDir,
        encoding: 'utf8',
      })
      expect(out).toContain('SUCCESS')
    },
  )

  it('when an alert reads a saga series, then a service exports that series', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8)
    for (const rule of rules) {
      const names = (
        rule.expr.replace(/\{[^}]*\}|\[[^\]]*\]|"[^"]*"/g, ' ').match(/[a-z_][a-z0-9_]*/g) ?? []
      ).filter((word) => word.startsWith('saga_'))
      // `up` is Prometheus's own series of each scrape target.
      expect(
        names.length + (rule.expr.includes('rabbitmq_') ? 1 : 0) + (/\bup\{/.test(rule.expr) ? 1 : 0),
        `${rule.alert} reads a known series`,
      ).toBeGreaterThan(0)
      for (const name of names) {
        expect(exported(name), `${rule.alert}: ${name} is exported`).toBe(true)
      }
    }
  })
})

describe('Grafana dashboard (infra/observability/grafana)', () => {
  it('when a dashboard panel is drawn, then its queries measure one thing in the unit the panel shows', () => {
    for (const panel of dashboard.panels) {
      const kinds = new Set(panel.targets.map((t) => measures(t.expr)))
      expect(kinds.size, `${panel.title} mixes seconds and counts`).toBe(1)
      expect(panel.fieldConfig.defaults.unit === 's', `${panel.title}: unit`).toBe(kinds.has('seconds'))
    }
    expect(measures('max by (job) (saga_db_oldest_transaction_age_seconds)')).toBe('seconds')
    expect(measures('rate(saga_order_time_to_final_state_seconds_count[5m])')).toBe('count')
  })

  it('when the dashboard is opened, then it shows completed sagas by outcome, handler queue depth and 5xx/shed', () => {
    const exprs = dashboard.panels.map((p) => p.targets.map((t) => t.expr).join('\n'))
    expect(
      exprs.some((e) => /saga_order_time_to_final_state_seconds_count/.test(e) && /by \(status\)/.test(e)),
    ).toBe(true)
    expect(
      exprs.some((e) => e.includes('rabbitmq_queue_messages{') && e.includes('queue!~".+\\\\.dlq"')),
    ).toBe(true)
    expect(exprs.some((e) => /status_code=~"5\.\."/.test(e) && /saga_http_requests_shed_total/.test(e))).toBe(
      true,
    )
  })

  it('when the Grafana dashboard queries a saga series, then a service exports it, never by the service label', () => {
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10)
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        expect(expr, panel.title).not.toMatch(/\bservice\b/)
        for (const name of seriesOf(expr)) expect(exported(name), `${panel.title}: ${name}`).toBe(true)
      }
    }
  })
})

describe('Prometheus alert rules: labels, runbooks, coverage', () => {
  it('when the rules aggregate, then they never group by the service label Prometheus Operator renames', () => {
    for (const rule of rules) expect(rule.expr, rule.alert).not.toMatch(/\bservice\b/)
  })

  it('when an alert is read, then its runbook_url is a section of docs/runbook.md, and each section is an alert', () => {
    const headings = [...runbook.matchAll(/^## (Saga\w+)$/gm)].map((m) => m[1])
    for (const rule of rules) {
      expect(rule.annotations.runbook_url, rule.alert).toBe(`docs/runbook.md#${rule.alert.toLowerCase()}`)
      expect(headings, `docs/runbook.md has no section ## ${rule.alert}`).toContain(rule.alert)
      expect(rule.annotations.summary, rule.alert).toBeTruthy()
    }
    expect(headings.sort()).toEqual(rules.map((r) => r.alert).sort())
  })

  it('when the promtool tests are read, then every alert has a scenario in which it fires', () => {
    const tests = parse(fs.readFileSync(path.join(rulesDir, 'alerts.test.yml'), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[]
    }
    const firing = new Set(
      tests.tests
        .flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0))
        .map((a) => a.alertname),
    )
    for (const rule of rules)
      expect(firing, `${rule.alert} has no firing case in alerts.test.yml`).toContain(rule.alert)
  })

  it("when an alert watches the services' scrape, then it names exactly the fleet's services", () => {
    const down = rules.find((r) => r.alert === 'SagaServiceDown')!
    const absent = rules.find((r) => r.alert === 'SagaServiceMetricsAbsent')!
    expect(down.expr).toContain(`job=~"${SERVICES.join('|')}"`)
    expect(rules.find((r) => r.alert === 'SagaInstanceDown')!.expr).toContain(`job=~"${SERVICES.join('|')}"`)
    expect([...absent.expr.matchAll(/absent\(up\{job="(\w+)"\}\)/g)].map((m) => m[1])).toEqual([...SERVICES])
  })
})
