import { describe, expect, it } from 'vitest'
import { batchSize, createHandlerPace } from './batch-size.js'

/** A pace of `averageMs` per handler and `overheadMs` per transaction. */
const pace = (averageMs: number | undefined, overheadMs: number | undefined) => ({ averageMs, overheadMs })

describe('batchSize', () => {
  it('when the handler is not measured yet, then a delivery runs alone', () => {
    expect(batchSize(pace(undefined, undefined), 20, 20)).toBe(1)
    expect(batchSize(pace(0.5, undefined), 20, 20)).toBe(1)
  })

  it('when handlers are fast next to their transaction, then the batch is as many as fit in the budget, at most max', () => {
    expect(batchSize(pace(2, 3), 20, 20)).toBe(10)
    expect(batchSize(pace(0.5, 1.5), 20, 20)).toBe(20)
    expect(batchSize(pace(0, 1), 20, 20)).toBe(20)
    expect(batchSize(pace(0.4, 1), 20, 3)).toBe(3)
  })

  it('when a handler takes the budget or longer, then each delivery runs alone', () => {
    expect(batchSize(pace(20, 30), 20, 20)).toBe(1)
    expect(batchSize(pace(150, 200), 20, 20)).toBe(1)
    expect(batchSize(pace(11, 15), 20, 20)).toBe(1)
  })

  it('when a handler takes as long as the transaction around it, then each delivery runs alone, however small the handler', () => {
    expect(batchSize(pace(5, 1.5), 20, 20)).toBe(1)
    expect(batchSize(pace(1, 1), 20, 20)).toBe(1)
  })

  it('when the budget is infinite, then the batch is max whatever the pace, measured or not', () => {
    expect(batchSize(pace(undefined, undefined), Number.POSITIVE_INFINITY, 20)).toBe(20)
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
    measured.recordOverhead(2)
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
