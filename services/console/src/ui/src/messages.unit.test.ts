import { describe, expect, it } from 'vitest'
import { orderReadFailure, outcomeNote } from './messages.js'

const id = '00000000-0000-0000-0000-000000000000'

describe('orderReadFailure', () => {
  it('when the order is unknown (404), then the page says once that it is not found and the banner stays empty', () => {
    const failure = orderReadFailure(id, 404, `Order ${id} not found`)
    expect(failure).toEqual({ page: `Order ${id} not found.`, banner: null })
  })

  it('when the service is unreachable, then the banner names the order once and the page stops loading', () => {
    const failure = orderReadFailure(id, 502, 'The order service is unreachable (ECONNREFUSED)')
    expect(failure.banner).toBe(`Order ${id}: The order service is unreachable (ECONNREFUSED)`)
    expect(failure.page).toBe(`Order ${id} could not be read.`)
  })

  it('when the message already names the order, then it is not named again', () => {
    const failure = orderReadFailure(id, 500, `Order ${id} could not be joined`)
    expect(failure.banner).toBe(`Order ${id} could not be joined`)
  })
})

describe('outcomeNote', () => {
  it('when the service refused fields, then each path and issue follow its message', () => {
    expect(outcomeNote('The request is invalid', [{ path: 'params.id', issue: 'Invalid UUID' }])).toBe(
      'The request is invalid (params.id: Invalid UUID)',
    )
  })

  it('when there are no details, then the message alone (or nothing)', () => {
    expect(outcomeNote('Order x is CONFIRMED, not PENDING', [])).toBe('Order x is CONFIRMED, not PENDING')
    expect(outcomeNote(null)).toBe('')
  })
})
