import { describe, expect, it } from 'vitest'
import { createSlots } from './slots.js'

const never = new AbortController().signal

describe('createSlots', () => {
  it('when the limit is reached, then later callers wait and are granted in arrival order', async () => {
    const slots = createSlots(2)
    const first = await slots.acquire(never)
    const second = await slots.acquire(never)
    const order: string[] = []
    const third = slots.acquire(never).then((release) => (order.push('third'), release))
    const fourth = slots.acquire(never).then((release) => (order.push('fourth'), release))
    expect({ running: slots.running, waiting: slots.waiting }).toEqual({ running: 2, waiting: 2 })

    second?.()
    const thirdRelease = await third
    expect(order).toEqual(['third'])
    first?.()
    first?.() // a second call of the same release frees nothing more
    await fourth
    expect(order).toEqual(['third', 'fourth'])
    expect({ running: slots.running, waiting: slots.waiting }).toEqual({ running: 2, waiting: 0 })
    thirdRelease?.()
    expect(slots.running).toBe(1)
  })

  it('when the signal aborts while waiting, then the waiter gets no slot and leaves the queue', async () => {
    const slots = createSlots(1)
    const held = await slots.acquire(never)
    const stopping = new AbortController()
    const waiting = slots.acquire(stopping.signal)

    stopping.abort()

    expect(await waiting).toBeUndefined()
    expect(slots.waiting).toBe(0)
    held?.()
    expect(slots.running).toBe(0)
    expect(await slots.acquire(stopping.signal)).toBeUndefined()
  })

  it('when the limit is not a positive integer, then it throws a RangeError', () => {
    expect(() => createSlots(0)).toThrow(RangeError)
    expect(() => createSlots(1.5)).toThrow(RangeError)
  })
})
