import { positiveInteger } from '../errors.js'
/** Frees a slot taken by `Slots.acquire`; calling it again does nothing. */
export type Release = () => void

/**
 * A fair counting semaphore: the consumer-wide limit on handler transactions running at once.
 * Shared by every handler queue of a consumer, so the limit holds across channels while each
 * channel keeps its own prefetch window.
 */
export interface Slots {
  /** The most slots held at once. */
  readonly limit: number
  /** Slots held now. */
  readonly running: number
  /** Callers waiting for a slot now. */
  readonly waiting: number
  /**
   * Resolves with a `Release` once a slot is free, first come first served; `undefined`, holding
   * nothing, when `signal` aborts first (the consumer stops: the delivery is left for redelivery).
   */
  acquire(signal: AbortSignal): Promise<Release | undefined>
}

interface Waiter {
  grant: (release: Release) => void
}

/**
 * Creates `Slots` with `limit` slots. A released slot passes straight to the longest waiter, so a
 * caller arriving later cannot jump the queue.
 * @throws RangeError when `limit` is not a positive integer.
 */
export function createSlots(limit: number): Slots {
  positiveInteger('concurrency', limit)
  let running = 0
  const queue: Waiter[] = []

  const releaser = (): Release => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = queue.shift()
      if (next) next.grant(releaser())
      else running -= 1
    }
  }

  return {
    limit,
    get running() {
      return running
    },
    get waiting() {
      return queue.length
    },
    acquire(signal) {
      if (signal.aborted) return Promise.resolve(undefined)
      if (running < limit) {
        running += 1
        return Promise.resolve(releaser())
      }
      return new Promise((resolve) => {
        const onAbort = (): void => {
          const index = queue.indexOf(waiter)
          if (index >= 0) queue.splice(index, 1)
          resolve(undefined)
        }
        const waiter: Waiter = {
          grant(release) {
            signal.removeEventListener('abort', onAbort)
            resolve(release)
          },
        }
        queue.push(waiter)
        signal.addEventListener('abort', onAbort, { once: true })
      })
    },
  }
}
