import { describe, expect, it } from 'vitest'
import { noAnswerReason, orderServiceUnreachable } from './http.js'

describe('noAnswerReason', () => {
  it('when fetch failed on a network error, then its cause is named, not "fetch failed"', () => {
    const error = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:3001') })
    expect(noAnswerReason(error, 5_000)).toBe('connect ECONNREFUSED 127.0.0.1:3001')
  })

  it('when the timeout fired, then it says how long was waited', () => {
    const error = new DOMException('The operation was aborted due to timeout', 'TimeoutError')
    expect(noAnswerReason(error, 5_000)).toBe('no answer within 5000 ms')
  })
})

describe('orderServiceUnreachable', () => {
  it('when the order service does not answer, then the one message names its URL, the reason and npm start', () => {
    expect(orderServiceUnreachable('http://127.0.0.1:3001', 'connect ECONNREFUSED 127.0.0.1:3001')).toBe(
      'the order service at http://127.0.0.1:3001 did not answer (connect ECONNREFUSED 127.0.0.1:3001); is the fleet running (npm start)?',
    )
  })
})
