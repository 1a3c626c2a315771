import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Poller, type PollerOptions } from './poller.js'

// Fake timers and a fake clock: every wait below is an exact step of the poller's own time, so a
// loaded machine cannot make a timer late.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

/** A poller on the fake clock. */
const poller = <T>(options: PollerOptions<T>): Poller<T> => new Poller({ ...options, now: () => Date.now() })
/** Resolves after `ms` of fake time. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
/** Moves the fake time on by `ms`, running the timers and promises due. */
const advance = (ms: number): Promise<unknown> => vi.advanceTimersByTimeAsync(ms)

describe('Poller', () => {
  it('when many listeners subscribe, then one read per interval feeds them all', async () => {
    let reads = 0
    const fleet = poller({ read: (seq) => Promise.resolve(((reads += 1), seq)), intervalMs: 50 })
    const seen: number[][] = Array.from({ length: 5 }, () => [])
    const stops = seen.map((list) => fleet.subscribe((seq) => list.push(seq)))
    // Reads at 0, 50, 100 and 150 ms.
    await advance(180)
    for (const stop of stops) stop()
    expect(reads).toBe(4)
    for (const list of seen) expect(list).toEqual([1, 2, 3, 4])
  })

  it('when a read is slower than the interval, then reads never overlap', async () => {
    let running = 0
    let most = 0
    let reads = 0
    const fleet = poller({
      read: async (seq) => {
        running += 1
        reads += 1
        most = Math.max(most, running)
        await sleep(40)
        running -= 1
        return seq
      },
      intervalMs: 10,
    })
    const stop = fleet.subscribe(() => undefined)
    const asked = Promise.all([fleet.current(), fleet.current()])
    await advance(150)
    await asked
    stop()
    expect(reads).toBeGreaterThanOrEqual(3)
    expect(most).toBe(1)
  })

  it('when nobody listens, then current() reads once per interval at most and nothing polls in between', async () => {
    let reads = 0
    const fleet = poller({ read: (seq) => Promise.resolve(((reads += 1), seq)), intervalMs: 1_000 })
    expect(await Promise.all([fleet.current(), fleet.current()])).toEqual([1, 1])
    expect(await fleet.current()).toBe(1)
    await advance(999)
    expect(await fleet.current()).toBe(1)
    expect(reads).toBe(1)
    await advance(1)
    expect(await fleet.current()).toBe(2)
    fleet.close()
  })

  it('when a read throws, then the error is reported and polling goes on', async () => {
    const errors: unknown[] = []
    const fleet = poller({
      read: (seq) => (seq === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(seq)),
      intervalMs: 20,
      onError: (error) => errors.push(error),
    })
    const seen: number[] = []
    const stop = fleet.subscribe((seq) => seen.push(seq))
    await advance(70)
    stop()
    expect(errors).toHaveLength(1)
    expect(seen).toEqual([2, 3, 4])
  })

  it('when it reads, then it is given the last snapshot read', async () => {
    const given: (number | undefined)[] = []
    const fleet = poller<number>({
      read: (seq, previous) => Promise.resolve((given.push(previous), seq)),
      intervalMs: 1,
    })
    await fleet.current()
    await advance(5)
    await fleet.current()
    fleet.close()
    expect(given).toEqual([undefined, 1])
  })

  it('when recent() is asked, then it answers the last snapshot without waiting while young enough, and refreshes it beside once it is past an interval', async () => {
    let release!: () => void
    let reads = 0
    const fleet = poller<number>({
      read: async (seq) => {
        reads += 1
        if (seq === 2) await new Promise<void>((resolve) => (release = resolve))
        return seq
      },
      intervalMs: 20,
    })
    // Nothing read yet: it waits for a read.
    expect(await fleet.recent(10_000)).toBe(1)
    // Within an interval: the last one, no read.
    await advance(19)
    expect(await fleet.recent(10_000)).toBe(1)
    expect(reads).toBe(1)
    // Past an interval: the last one at once, with a second read started beside it (held here).
    await advance(11)
    expect(await fleet.recent(10_000)).toBe(1)
    expect(reads).toBe(2)
    expect(await fleet.recent(10_000)).toBe(1)
    expect(reads).toBe(2)
    release()
    await advance(0)
    expect(fleet.latest()).toBe(2)
    // Older than maxAgeMs: as current(), a new read waited for.
    await advance(30)
    expect(await fleet.recent(25)).toBe(3)
    fleet.close()
  })
})
