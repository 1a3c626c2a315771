import { describe, expect, it } from 'vitest'
import { prefixRange } from './search.js'

describe('prefixRange', () => {
  it('when given hex digits with dashes in any case, then the first and last UUID that start with them', () => {
    expect(prefixRange('AB12-3')).toEqual({
      first: 'ab123000-0000-0000-0000-000000000000',
      last: 'ab123fff-ffff-ffff-ffff-ffffffffffff',
    })
  })

  it('when given a whole id, then the range is that id alone', () => {
    const id = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0'
    expect(prefixRange(id)).toEqual({ first: id, last: id })
  })

  it.each(['', '-', 'xyz', 'a'.repeat(33)])('when given %j, then it throws', (text) => {
    expect(() => prefixRange(text)).toThrow()
  })
})
