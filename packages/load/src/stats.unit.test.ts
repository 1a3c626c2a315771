import { describe, expect, it } from 'vitest'
import { parseMetrics } from './cpu.js'
import { completedPerSecond, largestBacklog, percentile } from './stats.js'

describe('load statistics', () => {
  it('when sagas overlap, then the largest backlog is the most in flight at one instant', () => {
    const sagas = [
      { createdAt: 0, terminalAt: 100 },
      { createdAt: 10, terminalAt: 50 },
      { createdAt: 20, terminalAt: 200 },
      { createdAt: 60, terminalAt: 70 },
    ]
    expect(largestBacklog(sagas)).toEqual({ size: 3, at: 20 })
  })

  it('when one saga ends the ms the next begins, then they are not counted together', () => {
    expect(
      largestBacklog([
        { createdAt: 0, terminalAt: 10 },
        { createdAt: 10, terminalAt: 20 },
      ]).size,
    ).toBe(1)
  })

  it('when an order is still pending, then it stays in the backlog to the end', () => {
    const sagas = [
      { createdAt: 0, terminalAt: undefined },
      { createdAt: 5, terminalAt: 6 },
      { createdAt: 7, terminalAt: 8 },
    ]
    expect(largestBacklog(sagas).size).toBe(2)
  })

  it('when sagas complete, then the rate is terminal orders over first creation to last terminal', () => {
    const sagas = [
      { createdAt: 0, terminalAt: 500 },
      { createdAt: 1_000, terminalAt: 2_000 },
      { createdAt: 1_500, terminalAt: undefined },
    ]
    expect(completedPerSecond(sagas)).toBe(1)
    expect(completedPerSecond([{ createdAt: 0, terminalAt: undefined }])).toBe(0)
  })

  it('when asked for a percentile, then it is the nearest rank of the sorted values', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(percentile(values, 50)).toBe(50)
    expect(percentile(values, 99)).toBe(99)
    expect(percentile(values, 100)).toBe(100)
    expect(percentile([], 50)).toBeNaN()
  })

  it('when a service exposes Prometheus text, then CPU, outbox pending and handled (summed over handlers) are read', () => {
    const text = [
      '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
      '# TYPE process_cpu_seconds_total counter',
      'process_cpu_seconds_total{saga_service="order"} 12.5',
      'process_cpu_user_seconds_total{saga_service="order"} 10',
      'saga_messaging_relay_pending{saga_service="order"} 3',
      'saga_messaging_consumer_handled_total{saga_service="order",handler="a"} 4',
      'saga_messaging_consumer_handled_total{saga_service="order",handler="b"} 6',
    ].join('\n')
    expect(
      parseMetrics(`${text}\nsaga_messaging_recorder_batches_total{saga_service="order",handler="r"} 2`),
    ).toEqual({
      cpuSeconds: 12.5,
      outboxPending: 3,
      handled: 10,
      recorderBatches: 2,
    })
    expect(parseMetrics('')).toEqual({
      cpuSeconds: undefined,
      outboxPending: undefined,
      handled: undefined,
      recorderBatches: undefined,
    })
  })
})
