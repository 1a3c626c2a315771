import { describe, expect, it } from 'vitest'
import { createSignals } from '../signals.js'
import { testStats } from '../testing/stats.js'
import { messagingMetrics, type MetricDescriptor, type ValueMetric } from './metrics.js'
import type { MessagingStats } from './parts.js'

const recorded = { recordedTotal: 4, batchesTotal: 2, splitTotal: 0, deadLetteredTotal: 0 }
const stats = (): MessagingStats =>
  testStats({
    relay: {
      pending: 3,
      oldestPendingAgeMs: 1500,
      parked: 1,
      publishedTotal: 9,
      failedTotal: 2,
      parkedTotal: 1,
      refusedTotal: 1,
    },
    consumer: {
      handledTotal: 5,
      inFlight: 1,
      byHandler: { 'reserve-stock': { handledTotal: 2, inFlight: 1 }, 'release-stock': { handledTotal: 3 } },
    },
    recorder: { ...recorded, byHandler: { 'record-timeline': recorded } },
  })
const health = () => ({ ok: true, areas: [] })

const metrics = (recorders: boolean): MetricDescriptor[] =>
  messagingMetrics('messaging', { stats, health, signals: createSignals(), recorders })
const value = (list: MetricDescriptor[], name: string): ValueMetric => {
  const found = list.find((m) => m.name === name)
  if (!found || found.kind === 'histogram') throw new Error(`no ${name}`)
  return found
}

describe('messaging metric descriptors', () => {
  it('when read, then durations are in seconds and named so, and counts are as the stats say', () => {
    const list = metrics(false)
    expect(value(list, 'messaging_relay_oldest_pending_age_seconds').read()).toEqual([
      { labels: {}, value: 1.5 },
    ])
    expect(value(list, 'messaging_relay_published_total')).toMatchObject({ kind: 'counter', labelNames: [] })
    expect(value(list, 'messaging_relay_pending')).toMatchObject({ kind: 'gauge' })
    expect(list.some((m) => /_ms$|Ms/.test(m.name))).toBe(false)
  })

  it('when counters are per handler, then the handler is a label and no unlabelled sum is exported beside them', () => {
    const handled = value(metrics(false), 'messaging_consumer_handled_total')
    expect(handled.labelNames).toEqual(['handler'])
    expect(handled.read()).toEqual([
      { labels: { handler: 'reserve-stock' }, value: 2 },
      { labels: { handler: 'release-stock' }, value: 3 },
    ])
  })

  it('when deliveries of a newer version are held, then the holds are a counter and those held now a gauge, by handler', () => {
    const held = testStats({ consumer: { byHandler: { 'reserve-stock': { heldTotal: 3, held: 1 } } } })
    const list = messagingMetrics('messaging', {
      stats: () => held,
      health,
      signals: createSignals(),
      recorders: false,
    })
    const labels = { handler: 'reserve-stock' }
    expect(value(list, 'messaging_consumer_held_total')).toMatchObject({ kind: 'counter' })
    expect(value(list, 'messaging_consumer_held_total').read()).toEqual([{ labels, value: 3 }])
    expect(value(list, 'messaging_consumer_held')).toMatchObject({ kind: 'gauge' })
    expect(value(list, 'messaging_consumer_held').read()).toEqual([{ labels, value: 1 }])
  })

  it('when the instance has recorders, then their series exist, labelled by recorder; without, they do not', () => {
    expect(value(metrics(true), 'messaging_recorder_recorded_total').read()).toEqual([
      { labels: { handler: 'record-timeline' }, value: 4 },
    ])
    expect(metrics(false).some((m) => m.name.startsWith('messaging_recorder_'))).toBe(false)
  })

  it('when listed, then every name is unique, under the prefix, and its HELP is a sentence other than its name', () => {
    const list = metrics(true)
    expect(new Set(list.map((m) => m.name)).size).toBe(list.length)
    for (const metric of list) {
      expect(metric.name).toMatch(/^messaging_[a-z_]+$/)
      expect(metric.help).toMatch(/^[A-Z].*\.$/)
      expect(metric.help).not.toContain(metric.name.replace(/^messaging_/, ''))
    }
  })
})
