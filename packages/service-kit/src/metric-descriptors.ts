import type { MetricDescriptor } from '@saga/messaging/parts'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

/**
 * Registers metric descriptors (`@saga/messaging`'s `messaging.metrics`, or any library's of the
 * same shape) on `registry`: counters and gauges are read at every scrape, histograms observe
 * until the returned function is called (the app's onClose calls it). The descriptors carry their
 * own names, HELP texts, label names and units; nothing is renamed here.
 */
export function registerDescriptors(
  registry: Registry,
  descriptors: readonly MetricDescriptor[],
): () => void {
  const stops: Array<() => void> = []
  for (const descriptor of descriptors) {
    const config = {
      name: descriptor.name,
      help: descriptor.help,
      labelNames: [...descriptor.labelNames],
      registers: [registry],
    }
    if (descriptor.kind === 'histogram') {
      const histogram = new Histogram({ ...config, buckets: [...descriptor.buckets] })
      stops.push(descriptor.observe((labels, value) => histogram.observe(labels, value)))
    } else if (descriptor.kind === 'counter') {
      new Counter({
        ...config,
        // The library owns the running total: mirror it (a label gone since the last scrape goes too).
        collect() {
          this.reset()
          for (const { labels, value } of descriptor.read()) this.inc(labels, value)
        },
      })
    } else {
      new Gauge({
        ...config,
        collect() {
          this.reset()
          for (const { labels, value } of descriptor.read()) this.set(labels, value)
        },
      })
    }
  }
  return () => stops.forEach((stop) => stop())
}
