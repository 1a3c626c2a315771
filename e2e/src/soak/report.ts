import type { SoakReport } from './soak.js'

const count = (record: Record<string, number>): string =>
  Object.entries(record)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key} ${n}`)
    .join(', ') || 'none'

/** How many faults of each kind fired, e.g. `kill 3, stop 2`. */
function faultsByKind(report: SoakReport): string {
  const byKind: Record<string, number> = {}
  for (const fault of report.faults) byKind[fault.kind] = (byKind[fault.kind] ?? 0) + 1
  return count(byKind)
}

/**
 * The soak's report for people: the run (seed, machine and its load), every fault fired with what
 * it did, the load's tally, each invariant held or its first violations, the broker's queues, and
 * the verdict. The JSON form is the `SoakReport` itself.
 */
export function formatReport(report: SoakReport): string {
  const o = report.options
  const m = report.machine
  const lines = [
    `soak ${report.runId}: ${report.ok ? 'PASSED' : 'FAILED'}`,
    `  started ${report.startedAt}; ${o.durationS} s at ${o.ratePerS} orders/s, ${Math.round(o.cancelShare * 100)} % cancelled by the customer`,
    `  seed ${o.seed} (replay: npm run soak -- --seed ${o.seed} --minutes ${o.durationS / 60} --rate ${o.ratePerS} --faults ${o.faults.join(',')})`,
    `  machine: ${m.cores} x ${m.cpus}, ${m.memoryGb} GB, Node ${m.node}; load average ${m.loadBefore.toFixed(2)} before, ${m.loadAfter.toFixed(2)} at the end`,
    '',
    `faults: ${report.faults.length} fired of ${report.planned.length} planned (${faultsByKind(report)})`,
    ...report.faults.map(
      (f) =>
        `  ${String(f.startedAtS).padStart(5)} s  ${f.kind.padEnd(16)} ${String(f.target).padEnd(9)} ${f.error ? `FAILED: ${f.error}` : f.detail} (${f.durationMs} ms)`,
    ),
    '',
    `load: ${report.load.placed} orders placed (${count(report.load.byKind)}); ${report.load.cancelsAsked} cancels asked (answers: ${count(report.load.cancelAnswers)})`,
    `  retried requests: ${count(report.load.retries)}; unresolved ${report.load.unresolved}; refused ${report.load.refused.length}`,
    ...report.load.refused.slice(0, 5).map((r) => `    ${r}`),
    `orders: ${report.orders.total} (${report.orders.confirmed} confirmed, ${report.orders.cancelled} cancelled); ` +
      `${report.messages.published} messages published, ${report.messages.republished} republished; settled in ${report.settleS} s`,
    '',
    'invariants:',
    ...Object.entries(report.invariants).flatMap(([name, violations]) =>
      violations.length === 0
        ? [`  held    ${name}`]
        : [
            `  BROKEN  ${name}: ${violations.length} violations`,
            ...violations.slice(0, 5).map((v) => `          ${v}`),
          ],
    ),
    `broker: ${report.broker.deadLettered.length === 0 ? 'nothing dead-lettered' : `dead-lettered: ${report.broker.deadLettered.map((q) => `${q.queue} ${q.messages}`).join(', ')}`}; ` +
      `${report.broker.waiting.length === 0 ? 'no queue holds a message' : `still waiting: ${report.broker.waiting.map((q) => `${q.queue} ${q.messages}`).join(', ')}`}`,
    `health after the run: ${Object.entries(report.health)
      .map(([s, status]) => `${s} ${status}`)
      .join(', ')}`,
  ]
  if (!report.ok) lines.push(`service logs kept in ${report.logDir}`)
  return lines.join('\n')
}
