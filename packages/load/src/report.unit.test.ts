import { describe, expect, it } from 'vitest'
import { overloadFailures } from './report.js'
import type { RunResult } from './run.js'

const run = (overrides: Partial<RunResult>): RunResult =>
  ({
    acceptMs: { p50: 10, p99: 40 },
    statuses: { 201: 900, 503: 300 },
    unavailableWithoutRetryAfter: 0,
    stillPending: 0,
    notFound: 0,
    ...overrides,
  }) as RunResult

describe('the verdict of an overload run', () => {
  it('when accepted POSTs kept the p99 and the rest were shed with 503 + Retry-After and nothing was lost, then it holds', () => {
    expect(overloadFailures(run({}), 50)).toEqual([])
  })

  it('when any rule is broken, then each is named', () => {
    const failures = overloadFailures(
      run({
        acceptMs: { p50: 10, p99: 80 },
        statuses: { 201: 900, 503: 3, 500: 2, 0: 1 },
        unavailableWithoutRetryAfter: 3,
        stillPending: 5,
        notFound: 1,
      }),
      50,
    )
    expect(failures).toEqual([
      'accept p99 80.0 ms > 50 ms',
      'answers other than 201/503: 0: 1, 500: 2',
      '3 503 without Retry-After',
      '4 accepted orders not terminal after the drain',
      '1 accepted orders not found',
    ])
  })
})
