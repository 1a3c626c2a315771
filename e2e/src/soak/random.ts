/**
 * A seeded pseudo-random source (mulberry32: 32-bit state, period 2^32), so a soak's fault schedule
 * and order mix replay exactly from its seed. Not for anything that needs unpredictability.
 */
export class Random {
  private state: number

  /** @param seed any integer; the same seed gives the same sequence */
  constructor(readonly seed: number) {
    this.state = seed >>> 0
  }

  /** The next number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  /** True with probability `p` (0-1). */
  chance(p: number): boolean {
    return this.next() < p
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[Math.floor(this.next() * items.length)]!
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const copy = [...items]
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
    }
    return copy
  }
}

/** A fresh seed for a run that was not given one (printed, so the run can be replayed). */
export const newSeed = (): number => Math.floor(Math.random() * 2 ** 31)
