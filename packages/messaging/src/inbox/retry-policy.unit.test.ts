import { describe, expect, it } from 'vitest'
import { afterFailure, retryDelayMs } from './retry-policy.js'

const policy = { baseMs: 200, maxMs: 5_000, maxAttempts: 4 }

describe('retryDelayMs', () => {
  it('when the random part is 0 or 1, then the delay spans half to the whole doubled step', () => {
    expect([1, 2, 3].map((attempt) => retryDelayMs(attempt, policy, () => 0))).toEqual([100, 200, 400])
    expect([1, 2, 3].map((attempt) => retryDelayMs(attempt, policy, () => 1))).toEqual([200, 400, 800])
  })

  it('when the doubling passes the cap, then the delay stays within the cap', () => {
    for (const attempt of [6, 10, 60]) {
      expect(retryDelayMs(attempt, policy, () => 1)).toBe(policy.maxMs)
      expect(retryDelayMs(attempt, policy, () => 0)).toBe(policy.maxMs / 2)
    }
  })
})

describe('afterFailure', () => {
  it('when attempts remain, then it retries; when the last attempt failed, then it dead-letters', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => afterFailure(attempt, policy))).toEqual([
      'retry',
      'retry',
      'retry',
      'dead-letter',
      'dead-letter',
    ])
  })
})
