import { InvalidArgumentError } from 'commander'
import { describe, expect, it } from 'vitest'
import { parse } from './index.js'

describe('parse', () => {
  it.each([
    ['12', 12],
    ['-1', -1],
    ['2.5', 2.5],
    ['.5', 0.5],
    ['1e3', 1000],
    [' 7 ', 7],
  ])('when a number is written in decimal (%s), then it is read', (text, value) => {
    expect(parse.number(text)).toBe(value)
  })

  it.each(['0x10', '0b11', '0o7', 'Infinity', 'abc', '', '1_000', '12abc'])(
    'when %j is not a decimal number, then it is refused',
    (text) => {
      expect(() => parse.number(text)).toThrow(InvalidArgumentError)
    },
  )

  it('when a positive number is hexadecimal or not above 0, then it is refused', () => {
    expect(parse.positiveNumber('2.5')).toBe(2.5)
    for (const text of ['0x10', '0', '-2']) expect(() => parse.positiveNumber(text), text).toThrow('above 0')
  })
})
