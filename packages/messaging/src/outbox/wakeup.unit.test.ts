import { describe, expect, it } from 'vitest'
import { Waker } from './wakeup.js'

describe('Waker', () => {
  it('when woken during a sleep, then the sleep ends at once', async () => {
    const waker = new Waker()
    const sleeping = waker.sleep(60_000)
    waker.wake()
    await expect(sleeping).resolves.toBeUndefined()
  })

  it('when woken before the sleep starts, then the next sleep returns at once and the one after waits', async () => {
    const waker = new Waker()
    waker.wake()
    await waker.sleep(60_000)
    let ended = false
    const second = waker.sleep(20).then(() => (ended = true))
    expect(ended).toBe(false)
    await second
    expect(ended).toBe(true)
  })
})
