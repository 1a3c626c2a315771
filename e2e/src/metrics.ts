import type { Fleet } from './fleet.js'
import type { ServiceName } from './run.js'

/**
 * The sum of every sample of the metric `name` in `text` (the Prometheus exposition format), over
 * all label sets (e.g. the per-handler series `saga_messaging_consumer_duplicates_total{handler="…",
 * saga_service="order"} 12`); 0 when absent.
 */
export function seriesValue(text: string, name: string): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/**
 * Sums a metric (e.g. `saga_messaging_consumer_duplicates_total`) over the running
 * instances of `services`. Counters restart at 0 with a process, so compare within one process life.
 */
export async function sumMetric(fleet: Fleet, name: string, services?: ServiceName[]): Promise<number> {
  let sum = 0
  for (const p of fleet.instances) {
    if (!p.running || (services && !services.includes(p.service))) continue
    const res = await fetch(`${p.url}/metrics`, { signal: AbortSignal.timeout(5_000) })
    sum += seriesValue(await res.text(), name)
  }
  return sum
}
