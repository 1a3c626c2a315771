import { describe, expect, it } from 'vitest'
import { backoffDelay } from './backoff.js'

describe('backoffDelay', () => {
  it('when attempts grow, then the delay doubles until the cap', () => {
    const top = () => 1
    expect([0, 1, 2, 3, 10].map((a) => backoffDelay(a, 100, 1_000, top))).toEqual([100, 200, 400, 800, 1_000])
  })

  it('when jitter is lowest, then the delay is half the capped value', () => {
    expect(backoffDelay(3, 100, 1_000, () => 0)).toBe(400)
    expect(backoffDelay(20, 100, 1_000, () => 0)).toBe(500)
  })
})
