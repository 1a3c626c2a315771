import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const rulesDir = path.join(root, 'infra/observability/prometheus')
const promtool = spawnSync('promtool', ['--version']).status === 0

interface Rule {
  alert: string
  expr: string
}
const rules = (
  parse(fs.readFileSync(path.join(rulesDir, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules)

// Where the fleet's series are named: a rule over a series nobody exports would never fire.
const sources = [
  // The messaging snapshot's series are named with their HELP text, beside the snapshot.
  'packages/messaging/src/metrics-help.ts',
  'packages/service-kit/src/messaging-series.ts',
  'packages/service-kit/src/database-metrics.ts',
  'packages/service-kit/src/messaging-histograms.ts',
  'packages/service-kit/src/metrics.ts',
  'services/order/src/metrics.ts',
].map((file) => fs.readFileSync(path.join(root, file), 'utf8'))

/** The saga series an expression reads (label matchers, ranges and strings removed). */
const seriesOf = (expr: string): string[] =>
  (expr.replace(/\{[^}]*\}|\[[^\]]*\]|"[^"]*"/g, ' ').match(/[a-z_][a-z0-9_]*/g) ?? []).filter((w) =>
    w.startsWith('saga_'),
  )

/** Whether a service exports `name` (a histogram's _bucket/_sum/_count count as the histogram). */
const exported = (name: string): boolean => {
  const base = name.replace(/_(bucket|sum|count)$/, '')
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
      expect(
        names.length + (rule.expr.includes('rabbitmq_') ? 1 : 0),
        `${rule.alert} reads a known series`,
      ).toBeGreaterThan(0)
      for (const name of names) {
        const base = name.replace(/_(bucket|sum|count)$/, '')
        expect(
          sources.some((source) => source.includes(`'${base}'`) || source.includes(`  ${base}:`)),
          `${rule.alert}: ${base} is exported`,
        ).toBe(true)
      }
    }
  })

  it('when the Grafana dashboard queries a saga series, then a service exports it, never by the service label', () => {
    const dashboard = JSON.parse(
      fs.readFileSync(path.join(root, 'infra/observability/grafana/saga-fleet.json'), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[] }
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10)
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        expect(expr, panel.title).not.toMatch(/\bservice\b/)
        for (const name of seriesOf(expr)) expect(exported(name), `${panel.title}: ${name}`).toBe(true)
      }
    }
  })

  it('when the rules aggregate, then they never group by the service label Prometheus Operator renames', () => {
    for (const rule of rules) expect(rule.expr, rule.alert).not.toMatch(/\bservice\b/)
  })
})
