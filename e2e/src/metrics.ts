import type { Fleet } from './fleet.js'
import type { ServiceName } from './run.js'

/** The value of an unlabelled Prometheus series in `text` (the exposition format), 0 when absent. */
export function seriesValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line ? Number(line.slice(name.length + 1)) : 0
}

/**
 * Sums an unlabelled series (e.g. `saga_messaging_consumer_duplicates_total`) over the running
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
