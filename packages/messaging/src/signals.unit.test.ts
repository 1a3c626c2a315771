import { describe, expect, it } from 'vitest'
import { createSignals, SignalTimeoutError } from './signals.js'

const published = { id: 'm-1', type: 't.v1', routingKey: 't' }

describe('signals', () => {
  it('when a matching signal is emitted, then waitFor resolves with its payload', async () => {
    const signals = createSignals()
    const waiting = signals.waitFor('published', (s) => s.id === 'm-1', 1_000)
    signals.emit('published', { ...published, id: 'm-0' })
    signals.emit('published', published)
    await expect(waiting).resolves.toEqual(published)
  })

  it('when no matching signal comes in time, then waitFor rejects with a timeout naming the signal', async () => {
    const signals = createSignals()
    await expect(signals.waitFor('parked', () => true, 20)).rejects.toThrow(SignalTimeoutError)
    await expect(signals.waitFor('parked', () => true, 20)).rejects.toThrow(/'parked'.*20 ms/)
  })

  it('when a listener throws, then the emitter and the other listeners are unaffected', () => {
    const signals = createSignals()
    const seen: string[] = []
    signals.on('published', () => {
      throw new Error('listener bug')
    })
    signals.on('published', (s) => seen.push(s.id))
    expect(() => signals.emit('published', published)).not.toThrow()
    expect(seen).toEqual(['m-1'])
  })

  it('when one function listens to two signals and is removed from one, then it still hears the other', () => {
    const signals = createSignals()
    const seen: string[] = []
    const listener = (s: { id: string }): void => void seen.push(s.id)
    signals.on('published', listener)
    signals.on('parked', listener)
    signals.off('published', listener)
    signals.emit('published', published)
    signals.emit('parked', { id: 'm-2', type: 't.v1', attempts: 3, error: 'x' })
    expect(seen).toEqual(['m-2'])
  })
})
