import type { HandlerCounters } from '../inbox/handle-delivery.js'
import { noCounters } from '../inbox/counters.js'
import { messagingStats, type MessagingStats } from '../observability/parts.js'

/** The figures a `testStats` sets; every figure left out is 0. */
export interface TestStatsFigures {
  relay?: Partial<MessagingStats['relay']>
  /** Summed handler counters, and each handler's under `byHandler` (neither is derived from the other). */
  consumer?: Partial<HandlerCounters> & { byHandler?: Record<string, Partial<HandlerCounters>> }
  /** Recorder counters; absent unless given, as for an instance without recorders. */
  recorder?: MessagingStats['recorder']
}

/**
 * Stats of an instance whose broker connections are open and unblocked, with `figures` set and
 * every other count 0: input for tests of what reads `MessagingStats` (metric descriptors, dashboards).
 */
export function testStats(figures: TestStatsFigures = {}): MessagingStats {
  const idle = messagingStats({
    relay: undefined,
    consumer: undefined,
    recorders: [],
    consumerConnection: undefined,
  })
  const { byHandler = {}, ...summed } = figures.consumer ?? {}
  const handlers = Object.entries(byHandler).map(
    ([name, counters]) => [name, { ...noCounters(), ...counters }] as const,
  )
  return {
    ...idle,
    relay: { ...idle.relay, ...figures.relay },
    consumer: { ...noCounters(), ...summed, byHandler: Object.fromEntries(handlers) },
    ...(figures.recorder ? { recorder: figures.recorder } : {}),
  }
}
