import { describe, expect, it } from 'vitest'
import { Poller } from './poller.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('Poller', () => {
  it('when many listeners subscribe, then one read per interval feeds them all', async () => {
    let reads = 0
    const poller = new Poller({ read: (seq) => Promise.resolve(((reads += 1), seq)), intervalMs: 50 })
    const seen: number[][] = Array.from({ length: 5 }, () => [])
    const stops = seen.map((list) => poller.subscribe((seq) => list.push(seq)))
    await sleep(180)
    for (const stop of stops) stop()
    expect(reads).toBeGreaterThanOrEqual(3)
    expect(reads).toBeLessThanOrEqual(5)
    for (const list of seen) expect(list).toEqual(Array.from({ length: reads }, (_, i) => i + 1))
  })

  it('when a read is slower than the interval, then reads never overlap', async () => {
    let running = 0
    let most = 0
    const poller = new Poller({
      read: async (seq) => {
        running += 1
        most = Math.max(most, running)
        await sleep(40)
        running -= 1
        return seq
      },
      intervalMs: 10,
    })
    const stop = poller.subscribe(() => undefined)
    await Promise.all([poller.current(), poller.current(), sleep(150)])
    stop()
    expect(most).toBe(1)
  })

  it('when nobody listens, then current() reads once per interval at most and nothing polls in between', async () => {
    let reads = 0
    const poller = new Poller({ read: (seq) => Promise.resolve(((reads += 1), seq)), intervalMs: 1_000 })
    expect(await Promise.all([poller.current(), poller.current()])).toEqual([1, 1])
    expect(await poller.current()).toBe(1)
    await sleep(50)
    expect(reads).toBe(1)
    poller.close()
  })

  it('when a read throws, then the error is reported and polling goes on', async () => {
    const errors: unknown[] = []
    const poller = new Poller({
      read: (seq) => (seq === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(seq)),
      intervalMs: 20,
      onError: (error) => errors.push(error),
    })
    const seen: number[] = []
    const stop = poller.subscribe((seq) => seen.push(seq))
    await sleep(70)
    stop()
    expect(errors).toHaveLength(1)
    expect(seen[0]).toBe(2)
  })

  it('when it reads, then it is given the last snapshot read', async () => {
    const given: (number | undefined)[] = []
    const poller = new Poller<number>({
      read: (seq, previous) => Promise.resolve((given.push(previous), seq)),
      intervalMs: 1,
    })
    await poller.current()
    await sleep(5)
    await poller.current()
    poller.close()
    expect(given).toEqual([undefined, 1])
  })

  it('when recent() is asked, then it answers the last snapshot without waiting while young enough, and refreshes it beside once it is past an interval', async () => {
    let release!: () => void
    let reads = 0
    const poller = new Poller<number>({
      read: async (seq) => {
        reads += 1
        if (seq === 2) await new Promise<void>((resolve) => (release = resolve))
        return seq
      },
      intervalMs: 20,
    })
    // Nothing read yet: it waits for a read.
    expect(await poller.recent(10_000)).toBe(1)
    await sleep(30)
    // Past an interval: the last one at once, with a second read started beside it (held here).
    expect(await poller.recent(10_000)).toBe(1)
    expect(reads).toBe(2)
    expect(await poller.recent(10_000)).toBe(1)
    expect(reads).toBe(2)
    release()
    await expect.poll(() => poller.latest()).toBe(2)
    // Older than maxAgeMs: as current(), a new read waited for.
    await sleep(30)
    expect(await poller.recent(25)).toBe(3)
    poller.close()
  })
})
