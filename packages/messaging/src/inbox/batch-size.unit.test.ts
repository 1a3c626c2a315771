import { describe, expect, it } from 'vitest'
import { batchSize, createHandlerPace } from './batch-size.js'

describe('batchSize', () => {
  it('when the handler is not measured yet, then a delivery runs alone', () => {
    expect(batchSize(undefined, 20, 20)).toBe(1)
  })

  it('when handlers are fast, then the batch is as many as fit in the budget, at most max', () => {
    expect(batchSize(2, 20, 20)).toBe(10)
    expect(batchSize(0.5, 20, 20)).toBe(20)
    expect(batchSize(0, 20, 20)).toBe(20)
    expect(batchSize(4, 20, 3)).toBe(3)
  })

  it('when a handler takes the budget or longer, then each delivery runs alone', () => {
    expect(batchSize(20, 20, 20)).toBe(1)
    expect(batchSize(150, 20, 20)).toBe(1)
    expect(batchSize(11, 20, 20)).toBe(1)
  })

  it('when the budget is infinite, then the batch is max whatever the pace, measured or not', () => {
    expect(batchSize(undefined, Number.POSITIVE_INFINITY, 20)).toBe(20)
    expect(batchSize(1_000, Number.POSITIVE_INFINITY, 7)).toBe(7)
  })
})

describe('createHandlerPace', () => {
  it('when nothing was recorded, then the average is undefined; the first time is the average', () => {
    const pace = createHandlerPace()
    expect(pace.averageMs).toBeUndefined()
    pace.record(10)
    expect(pace.averageMs).toBe(10)
  })

  it('when a handler turns slow, then the average follows within a few handlers', () => {
    const pace = createHandlerPace()
    pace.record(1)
    pace.record(151)
    expect(pace.averageMs).toBeCloseTo(31)
    expect(batchSize(pace.averageMs, 20, 20)).toBe(1)
    for (let i = 0; i < 30; i += 1) pace.record(1)
    expect(pace.averageMs).toBeLessThan(1.1)
    expect(batchSize(pace.averageMs, 20, 20)).toBeGreaterThanOrEqual(18)
  })
})
