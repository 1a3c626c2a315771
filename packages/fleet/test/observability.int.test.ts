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
  'packages/service-kit/src/messaging-series.ts',
  'packages/service-kit/src/database-metrics.ts',
  'packages/service-kit/src/messaging-histograms.ts',
  'packages/service-kit/src/metrics.ts',
].map((file) => fs.readFileSync(path.join(root, file), 'utf8'))

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

  it('when the rules aggregate, then they never group by the service label Prometheus Operator renames', () => {
    for (const rule of rules) expect(rule.expr, rule.alert).not.toMatch(/\bservice\b/)
  })
})
