import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from './views.js'

describe('order list cursor', () => {
  it('when a cursor is encoded, then it decodes to the same position', () => {
    const position = { createdAt: new Date('2026-11-29T12:34:56.789Z'), id: randomUUID() }
    expect(decodeCursor(encodeCursor(position))).toEqual(position)
  })

  it('when a cursor is not one this API made, then it decodes to nothing', () => {
    const id = randomUUID()
    const crafted = (text: string) => Buffer.from(text).toString('base64url')
    expect(decodeCursor('bm90LWEtY3Vyc29y')).toBeUndefined()
    expect(decodeCursor(crafted(`-271821-04-20T00:00:00.000Z|${id}`))).toBeUndefined()
    expect(decodeCursor(crafted(`2026-11-29|${id}`))).toBeUndefined()
    expect(decodeCursor(crafted('2026-11-29T12:34:56.789Z|not-a-uuid'))).toBeUndefined()
    expect(decodeCursor(crafted(`2026-11-29T12:34:56.789Z|${id}|extra`))).toBeUndefined()
  })
})
