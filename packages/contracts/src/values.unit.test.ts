import { describe, expect, it } from 'vitest'
import { COUNTRY_CODES, CURRENCY_CODES } from './iso-codes.js'
import {
  Country,
  Currency,
  Id,
  MAX_AMOUNT,
  minorUnitExponent,
  Money,
  OrderLine,
  ShippingAddress,
  Sku,
  text,
} from './values.js'

const issuePaths = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) => [
  ...new Set(result.error?.issues.map((issue) => issue.path.join('.'))),
]

describe('values', () => {
  it('when the ISO lists are loaded, then they hold 249 distinct countries and distinct currencies', () => {
    expect(new Set(COUNTRY_CODES).size).toBe(249)
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length)
    // Node's ICU knows every ISO 4217 currency: a code it cannot name is a typo in our list.
    const names = new Intl.DisplayNames(['en'], { type: 'currency', fallback: 'none' })
    expect(CURRENCY_CODES.filter((code) => names.of(code) === undefined)).toEqual([])
  })

  it('when a currency or country code is unknown or lower case, then it is rejected', () => {
    expect(Currency.safeParse('EUR').success).toBe(true)
    expect(Currency.safeParse('eur').success).toBe(false)
    expect(Currency.safeParse('XXX').success).toBe(false)
    expect(Country.safeParse('DE').success).toBe(true)
    expect(Country.safeParse('UK').success).toBe(false)
    expect(Country.safeParse('de').success).toBe(false)
  })

  it.each([
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    'FfFfFfFf-fFfF-FFFF-ffff-FFFFffffFFFF',
    '00000000-0000-0000-0000-000000000000',
    'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
    'a0eebc99-9c0b-0ef8-0b6d-6bb9bd380a11',
  ])('when an id is %s, then it is a UUID as PostgreSQL reads it', (id) => {
    expect(Id.safeParse(id).success).toBe(true)
  })

  it.each([
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11x',
    'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    'a0eebc999c0b4ef8bb6d6bb9bd380a11',
    '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
  ])('when an id is %s, then it is refused with what a UUID looks like', (id) => {
    expect(Id.safeParse(id).error?.issues[0]?.message).toBe(
      'must be a UUID: 32 hexadecimal digits as 8-4-4-4-12',
    )
  })

  it('when asked for minor-unit exponents, then they follow ISO 4217', () => {
    expect([minorUnitExponent('EUR'), minorUnitExponent('JPY'), minorUnitExponent('KWD')]).toEqual([2, 0, 3])
  })

  it('when a line has a zero, negative, fractional or absurd quantity or price, then the field is named', () => {
    const bad = [
      [{ sku: 'A-1', quantity: 0, unitPrice: 100 }, 'quantity'],
      [{ sku: 'A-1', quantity: -1, unitPrice: 100 }, 'quantity'],
      [{ sku: 'A-1', quantity: 1.5, unitPrice: 100 }, 'quantity'],
      [{ sku: 'A-1', quantity: 1_000_001, unitPrice: 100 }, 'quantity'],
      [{ sku: 'A-1', quantity: 1, unitPrice: 0 }, 'unitPrice'],
      [{ sku: 'A-1', quantity: 1, unitPrice: 9.99 }, 'unitPrice'],
      [{ sku: 'A-1', quantity: 1, unitPrice: '100' }, 'unitPrice'],
      [{ sku: '', quantity: 1, unitPrice: 100 }, 'sku'],
    ] as const
    for (const [line, path] of bad) expect(issuePaths(OrderLine.safeParse(line))).toEqual([path])
    expect(OrderLine.safeParse({ sku: 'A-1', quantity: 3, unitPrice: 1999 }).success).toBe(true)
  })

  it('when text holds a NUL byte, control characters, a lone surrogate or only blanks, then it is rejected', () => {
    expect(text(10).safeParse('a\u0000b').success).toBe(false)
    expect(text(10).safeParse('a\nb').success).toBe(false)
    expect(text(10).safeParse('a\ud800b').success).toBe(false)
    expect(text(10).safeParse('\udc00').success).toBe(false)
    expect(text(10).safeParse('Zoë 😀').success).toBe(true)
    expect(text(10).safeParse('   ').success).toBe(false)
    expect(text(10).safeParse('x'.repeat(11)).success).toBe(false)
    expect(text(10).safeParse('Ana Lima').success).toBe(true)
    expect(Sku.safeParse('SKU 1').success).toBe(false)
  })

  it('when an address misses a field or has a bad country, then each bad field is named', () => {
    const result = ShippingAddress.safeParse({ name: 'Ana', line1: 'Rua 1', city: 'Porto', country: 'ZZ' })
    expect(issuePaths(result).sort()).toEqual(['country', 'postalCode'])
  })
})

describe('Money', () => {
  it('when money is one value, then the amount follows MinorUnits and the currency ISO 4217', () => {
    expect(Money.parse({ amount: 4499, currency: 'EUR' })).toEqual({ amount: 4499, currency: 'EUR' })
    expect(Money.safeParse({ amount: MAX_AMOUNT, currency: 'JPY' }).success).toBe(true)
    const paths = (value: unknown) => Money.safeParse(value).error?.issues.map((i) => i.path.join('.')) ?? []
    expect(paths({ amount: 44.99, currency: 'EUR' })).toEqual(['amount'])
    expect(paths({ amount: -1, currency: 'EUR' })).toEqual(['amount'])
    expect(paths({ amount: MAX_AMOUNT + 1, currency: 'EUR' })).toEqual(['amount'])
    expect(paths({ amount: 1, currency: 'eur' })).toEqual(['currency'])
    expect(paths({ amount: 1 })).toEqual(['currency'])
  })
})
