import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { SCRAPE_EVERY_S, type RunResult } from './run.js'
import { fmt } from './stats.js'

const ms = (n: number): string => `${fmt(n, n < 100 ? 1 : 0)} ms`
const counts = (record: Record<string, number>): string =>
  Object.entries(record)
    .map(([k, v]) => `${k}: ${fmt(v)}`)
    .join(', ') || 'none'

/** Order of the CPU columns: the services in chain order, then the servers. */
const CPU_ORDER = [
  'order',
  'payment',
  'inventory',
  'shipment',
  'postgres',
  'rabbitmq',
  'total',
  'postgres-all',
]

const cpuText = (cpu: Record<string, number>): string =>
  CPU_ORDER.filter((k) => cpu[k] !== undefined)
    .map((k) => `${k} ${fmt(cpu[k]!, 1)}`)
    .join(', ')

/** A run as the lines printed at its end. */
export function describeRun(r: RunResult): string {
  const lines = [
    `steady ${fmt(r.rate)} orders/s for ${fmt(r.seconds)} s: placed ${fmt(r.placed)}, accepted ${fmt(r.accepted)} (${fmt(r.acceptedPerSecond, 1)}/s)`,
    `  accept (POST -> 201)       p50 ${ms(r.acceptMs.p50)}  p99 ${ms(r.acceptMs.p99)}`,
    `  POST -> terminal           p50 ${ms(r.terminalMs.p50)}  p90 ${ms(r.terminalMs.p90)}  p99 ${ms(r.terminalMs.p99)}  max ${ms(r.terminalMs.max)}`,
    `  completed sagas            ${fmt(r.completed)} (${fmt(r.completedPerSecond, 1)}/s), still pending ${fmt(r.stillPending)}, drain after the last POST ${ms(r.drainMs)}`,
    `  largest backlog            ${fmt(r.largestBacklog)} sagas in flight; outbox rows pending at most ${fmt(r.largestOutboxPending)} (${SCRAPE_EVERY_S} s samples)`,
    `  answers by status          ${counts(r.statuses)}${r.unavailableWithoutRetryAfter ? `  (${r.unavailableWithoutRetryAfter} 503 without Retry-After!)` : ''}`,
    `  orders by end state        ${counts(r.byStatus)}`,
    `  CPU ms per saga            ${cpuText(r.cpuMsPerSaga)}`,
    `  consumer writes per saga   ${r.consumerTxPerSaga === undefined ? 'n/a' : fmt(r.consumerTxPerSaga, 2)}`,
    `  machine busy               ${r.machineBusy === undefined ? 'n/a' : `${fmt(r.machineBusy * 100)} % of all cores (every process, every user)`}`,
    `  client                     ${fmt(r.clientCore * 100)} % of a core, ${fmt(r.late)} POSTs sent late${r.late > 0 ? ' (the client fell behind its schedule: a busy machine, or maxInFlight reached)' : ''}`,
  ]
  return lines.join('\n')
}

/**
 * The verdict of an overload run (docs/performance.md, "Overload"): every POST answered 201 within `acceptP99Ms`
 * at p99 or shed with 503 + Retry-After, no 5xx other than 503, no request without an answer, and
 * every accepted order terminal after the drain (none lost). Returns the reasons it failed (empty =
 * passed).
 */
export function overloadFailures(r: RunResult, acceptP99Ms: number): string[] {
  const failures: string[] = []
  if (!(r.acceptMs.p99 <= acceptP99Ms)) failures.push(`accept p99 ${ms(r.acceptMs.p99)} > ${acceptP99Ms} ms`)
  const others = Object.entries(r.statuses).filter(([s]) => s !== '201' && s !== '503')
  if (others.length > 0)
    failures.push(`answers other than 201/503: ${others.map(([s, n]) => `${s}: ${n}`).join(', ')}`)
  if (r.unavailableWithoutRetryAfter > 0)
    failures.push(`${r.unavailableWithoutRetryAfter} 503 without Retry-After`)
  if (r.stillPending - r.notFound > 0)
    failures.push(`${r.stillPending - r.notFound} accepted orders not terminal after the drain`)
  if (r.notFound > 0) failures.push(`${r.notFound} accepted orders not found`)
  return failures
}

/** An overload run as the lines printed at its end: `describeRun` plus the shedding and the verdict. */
export function describeOverload(r: RunResult, acceptP99Ms: number): string {
  const shed = r.statuses['503'] ?? 0
  const failures = overloadFailures(r, acceptP99Ms)
  return [
    describeRun(r),
    `  overload                   offered ${fmt(r.rate)}/s (twice the given rate) for ${fmt(r.seconds)} s: accepted ${fmt(r.accepted)}, shed ${fmt(shed)} (503)`,
    `  shed answer (POST -> 503)  p50 ${ms(r.shedMs.p50)}  p99 ${ms(r.shedMs.p99)}  max ${ms(r.shedMs.max)}`,
    `  drain                      ${ms(r.drainMs)} from the last answer until no accepted order was PENDING; not terminal or not found ${fmt(r.stillPending)}`,
    failures.length === 0
      ? `  verdict                    held: accept p99 <= ${acceptP99Ms} ms or shed with 503 + Retry-After, no other error, nothing lost`
      : `  verdict                    FAILED: ${failures.join('; ')}`,
  ].join('\n')
}

/** Markdown table of runs, one row each. */
export function runsTable(runs: readonly RunResult[]): string {
  const header = [
    '| rate × s | accepted/s | accept p50 / p99 | POST→terminal p50 / p90 / p99 | sagas/s | backlog max | drain | errors | CPU ms/saga (order, payment, inventory, shipment, PG, RabbitMQ = total) | consumer writes/saga | machine busy |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  const rows = runs.map((r) => {
    const c = r.cpuMsPerSaga
    const one = (k: string): string => (c[k] === undefined ? '–' : fmt(c[k], 1))
    const errors = Object.entries(r.statuses).filter(([s]) => s !== '201')
    return [
      `${fmt(r.rate)} × ${fmt(r.seconds)}`,
      fmt(r.acceptedPerSecond, 1),
      `${ms(r.acceptMs.p50)} / ${ms(r.acceptMs.p99)}`,
      `${ms(r.terminalMs.p50)} / ${ms(r.terminalMs.p90)} / ${ms(r.terminalMs.p99)}`,
      fmt(r.completedPerSecond, 1),
      fmt(r.largestBacklog),
      ms(r.drainMs),
      errors.length ? errors.map(([s, n]) => `${s}: ${n}`).join(', ') : '0',
      `${['order', 'payment', 'inventory', 'shipment', 'postgres', 'rabbitmq'].map(one).join(', ')} = ${one('total')}`,
      r.consumerTxPerSaga === undefined ? '–' : fmt(r.consumerTxPerSaga, 2),
      r.machineBusy === undefined ? '–' : `${fmt(r.machineBusy * 100)} %`,
    ].join(' | ')
  })
  return [...header, ...rows.map((row) => `| ${row} |`)].join('\n')
}

/** One line about the machine and the moment: date, CPU model and count, load, Node, git commit. */
export function machineLine(): string {
  let commit = 'unknown'
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    // Not a git checkout (a container image): the commit stays unknown.
  }
  const cpus = os.cpus()
  return (
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ` +
    `${fmt(os.totalmem() / 2 ** 30, 1)} GiB, load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')} at start, Node ${process.version}, commit ${commit}`
  )
}
