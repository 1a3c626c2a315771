import { describe, expect, it } from 'vitest'
import { firstInvalidUtf8, mediaTypeOf, parseJsonBody, refuseBody } from './json-body.js'

const bytes = (...b: number[]) => Buffer.from(b)

describe('firstInvalidUtf8', () => {
  it('when every sequence is well formed, then it finds none', () => {
    expect(firstInvalidUtf8(Buffer.from('Ana Lima, Zürich 🚚 €', 'utf8'))).toBe(-1)
  })

  it('when a byte cannot start or continue a sequence, then it names its offset', () => {
    expect(firstInvalidUtf8(bytes(0x41, 0xff, 0x42))).toBe(1)
    expect(firstInvalidUtf8(bytes(0x41, 0xc3))).toBe(1) // truncated
    expect(firstInvalidUtf8(bytes(0xc0, 0xaf))).toBe(0) // overlong '/'
    expect(firstInvalidUtf8(bytes(0xed, 0xa0, 0x80))).toBe(0) // a UTF-16 surrogate
    expect(firstInvalidUtf8(bytes(0xf4, 0x90, 0x80, 0x80))).toBe(0) // past U+10FFFF
  })
})

describe('parseJsonBody', () => {
  it('when the body is empty and the route takes none, then it is no body (undefined); when the route needs one, then 400', () => {
    expect(parseJsonBody('application/json', Buffer.from(''), { bodyRequired: false })).toBeUndefined()
    expect(parseJsonBody('application/json', Buffer.from(' \n'), { bodyRequired: false })).toBeUndefined()
    expect(() => parseJsonBody('application/json', Buffer.from(''))).toThrow(
      expect.objectContaining({ statusCode: 400, message: 'The body is empty; send a JSON document' }),
    )
    expect(() => parseJsonBody('application/json', Buffer.from('{'), { bodyRequired: false })).toThrow(
      'Body is not valid JSON',
    )
  })

  it('when the body is UTF-8 JSON, with or without a utf-8 charset, then it is parsed', () => {
    const body = Buffer.from('{"name":"Zoë"}', 'utf8')
    expect(parseJsonBody('application/json', body)).toEqual({ name: 'Zoë' })
    expect(parseJsonBody('application/json; charset="UTF-8"', body)).toEqual({ name: 'Zoë' })
  })

  it('when two bodies differ only in an invalid byte, then both are refused rather than read as the same U+FFFD', () => {
    const a = Buffer.from([...Buffer.from('{"name":"A'), 0xff, ...Buffer.from('B"}')])
    const b = Buffer.from([...Buffer.from('{"name":"A'), 0xfe, ...Buffer.from('B"}')])
    expect(() => parseJsonBody('application/json', a)).toThrow('The body is not valid UTF-8')
    expect(() => parseJsonBody('application/json', b)).toThrow('The body is not valid UTF-8')
  })

  it('when a charset other than UTF-8 is declared, then it is refused with 415', () => {
    expect(() => parseJsonBody('application/json; charset=latin1', Buffer.from('{}'))).toThrow(
      expect.objectContaining({ statusCode: 415 }),
    )
  })

  it('when a key could pollute prototypes, then the refusal names it', () => {
    expect(() => parseJsonBody('application/json', Buffer.from('[{"__proto__":{}}]'))).toThrow(
      expect.objectContaining({ details: [{ path: 'body.0.__proto__', issue: 'is not an allowed key' }] }),
    )
  })
})

describe('refuseBody', () => {
  it('when a route needs a body and gets no body and no content type, then the empty-body 400', () => {
    for (const body of [undefined, null]) {
      expect(refuseBody(true, undefined, body)).toMatchObject({
        statusCode: 400,
        message: 'The body is empty; send a JSON document',
        details: [{ path: 'body', issue: 'is empty' }],
      })
    }
  })

  it('when a route needs a body and the content type is not JSON, then 415 naming application/json', () => {
    expect(refuseBody(true, 'text/plain;charset=UTF-8', 'x')).toMatchObject({
      statusCode: 415,
      message: "The body's media type 'text/plain' is not supported; send application/json",
      details: [{ path: 'headers.content-type', issue: 'must be application/json' }],
    })
  })

  it('when the body is JSON (even the document null), or the route takes no body, then nothing is refused', () => {
    expect(refuseBody(true, 'Application/JSON; charset=utf-8', { a: 1 })).toBeUndefined()
    expect(refuseBody(true, 'application/json', null)).toBeUndefined()
    expect(refuseBody(false, undefined, null)).toBeUndefined()
    expect(refuseBody(false, 'text/plain', '')).toBeUndefined()
  })

  it('when a content type has parameters or capitals, then its media type is the bare lower-case type', () => {
    expect(mediaTypeOf(' Text/Plain ; charset=utf-8')).toBe('text/plain')
  })
})
