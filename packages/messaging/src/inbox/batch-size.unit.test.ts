import { describe, expect, it } from 'vitest'
import { batchSize, createHandlerPace } from './batch-size.js'

/** A pace of `averageMs` per handler and `overheadMs` per transaction around them. */
const pace = (averageMs: number | undefined, overheadMs?: number) => ({ averageMs, overheadMs })

describe('batchSize', () => {
  it('when the handler is not measured yet, then a delivery runs alone', () => {
    expect(batchSize(pace(undefined), 20, 20)).toBe(1)
    expect(batchSize(pace(undefined, 1), 20, 20)).toBe(1)
  })

  it('when handlers are shorter than the budget, then the batch is as many as fit in it, at most max', () => {
    expect(batchSize(pace(2, 1), 20, 20)).toBe(10)
    expect(batchSize(pace(5, 1), 20, 20)).toBe(4)
    expect(batchSize(pace(0.5), 20, 20)).toBe(20)
    expect(batchSize(pace(0, 1), 20, 20)).toBe(20)
    expect(batchSize(pace(0.4, 1), 20, 3)).toBe(3)
  })

  it('when a handler takes more than half the budget, then each delivery runs alone', () => {
    expect(batchSize(pace(20, 1), 20, 20)).toBe(1)
    expect(batchSize(pace(150, 2), 20, 20)).toBe(1)
    expect(batchSize(pace(11, 1), 20, 20)).toBe(1)
  })

  it('when the database is slow, then the batch may hold ten transactions of overhead in handler time', () => {
    // 8 ms handlers inside 10 ms transactions: 100 ms of allowance, not 20.
    expect(batchSize(pace(8, 10), 20, 20)).toBe(12)
    expect(batchSize(pace(2, 10), 20, 20)).toBe(20)
    // A handler that waits 150 ms elsewhere still runs alone unless transactions take 15 ms or more.
    expect(batchSize(pace(150, 10), 20, 20)).toBe(1)
  })

  it('when the budget is infinite, then the batch is max whatever the pace, measured or not', () => {
    expect(batchSize(pace(undefined), Number.POSITIVE_INFINITY, 20)).toBe(20)
    expect(batchSize(pace(1_000, 1), Number.POSITIVE_INFINITY, 7)).toBe(7)
  })
})

describe('createHandlerPace', () => {
  it('when nothing was recorded, then the averages are undefined; the first times are the averages', () => {
    const measured = createHandlerPace()
    expect(measured).toMatchObject({ averageMs: undefined, overheadMs: undefined })
    measured.record(10)
    measured.recordOverhead(2)
    expect(measured).toMatchObject({ averageMs: 10, overheadMs: 2 })
  })

  it('when a handler turns slow, then the average follows within a few handlers', () => {
    const measured = createHandlerPace()
    measured.recordOverhead(1)
    measured.record(1)
    measured.record(151)
    expect(measured.averageMs).toBeCloseTo(31)
    expect(batchSize(measured, 20, 20)).toBe(1)
    for (let i = 0; i < 30; i += 1) measured.record(1)
    expect(measured.averageMs).toBeLessThan(1.1)
    expect(batchSize(measured, 20, 20)).toBeGreaterThanOrEqual(18)
  })

  it('when an overhead below 0 is recorded, then it counts as 0', () => {
    const measured = createHandlerPace()
    measured.recordOverhead(-3)
    expect(measured.overheadMs).toBe(0)
  })
})
