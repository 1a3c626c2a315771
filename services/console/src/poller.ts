/** Listener of new snapshots. */
export type SnapshotListener<T> = (snapshot: T) => void

/** Options of `Poller`. */
export interface PollerOptions<T> {
  /**
   * Reads one snapshot; must not throw (a failure belongs in the snapshot). `seq` counts polls;
   * `previous` is the last snapshot read (undefined before the first), for what a snapshot carries
   * over from the one before.
   */
  read: (seq: number, previous: T | undefined) => Promise<T>
  /** Time from one poll's start to the next one's, ms (a poll that takes longer is followed at once). */
  intervalMs: number
  /** Told of a `read` that threw anyway; the poller goes on. */
  onError?: ((error: unknown) => void) | undefined
  /** The clock snapshots' ages are measured with, ms. Default `performance.now`. */
  now?: (() => number) | undefined
}

/**
 * The one reader of the fleet, however many tabs watch. It polls only while someone listens
 * (`subscribe`); `current()` between polls answers the last snapshot while it is younger than the
 * interval, else polls once. Polls never overlap: a request that arrives while one runs waits for it,
 * so N tabs or N `GET /api/fleet` cost the services what one reader costs.
 * States: idle (no listener, no timer) -> polling (a timer or a read in flight) -> closed.
 */
export class Poller<T> {
  private readonly listeners = new Set<SnapshotListener<T>>()
  private latestValue: { snapshot: T; at: number } | undefined
  private inFlight: Promise<T> | undefined
  private timer: NodeJS.Timeout | undefined
  private seq = 0
  private closed = false
  /** A tick is awaiting its read or its timer is set. */
  private running = false

  private readonly now: () => number

  constructor(private readonly options: PollerOptions<T>) {
    this.now = options.now ?? (() => performance.now())
  }

  /** The last snapshot read, if any. */
  latest(): T | undefined {
    return this.latestValue?.snapshot
  }

  /** How many reads have started. */
  get polls(): number {
    return this.seq
  }

  /** How many listeners are subscribed. */
  get listenerCount(): number {
    return this.listeners.size
  }

  /**
   * Calls `listener` with every new snapshot (and at once with the last one, while it is younger
   * than two intervals: an older one would show a fleet long gone);
   * the first listener starts the polling, the last one to leave stops it.
   * @returns the function that unsubscribes
   */
  subscribe(listener: SnapshotListener<T>): () => void {
    this.listeners.add(listener)
    const last = this.latestValue
    if (last !== undefined && this.now() - last.at < 2 * this.options.intervalMs) listener(last.snapshot)
    if (!this.running) void this.tick()
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0) this.stopTimer()
    }
  }

  /** A snapshot at most one interval old: the last one, the poll in flight, or a new poll. */
  current(): Promise<T> {
    if (this.latestValue !== undefined && this.now() - this.latestValue.at < this.options.intervalMs)
      return Promise.resolve(this.latestValue.snapshot)
    return this.inFlight ?? this.poll()
  }

  /**
   * The last snapshot at once while it is younger than `maxAgeMs`, starting a poll beside it when it
   * is older than an interval (so the next caller has a fresher one, at the cost `current()` would
   * have); else `current()`. For a reader that must not wait on a poll each time (an order's page).
   */
  recent(maxAgeMs: number): Promise<T> {
    const last = this.latestValue
    if (last === undefined || this.now() - last.at >= maxAgeMs) return this.current()
    if (this.now() - last.at >= this.options.intervalMs && this.inFlight === undefined)
      void this.poll().catch((error: unknown) => this.options.onError?.(error))
    return Promise.resolve(last.snapshot)
  }

  /** Stops polling for good; listeners are dropped. */
  close(): void {
    this.closed = true
    this.listeners.clear()
    this.stopTimer()
  }

  private stopTimer(): void {
    if (this.timer === undefined) return
    clearTimeout(this.timer)
    this.timer = undefined
    this.running = false
  }

  private poll(): Promise<T> {
    this.seq += 1
    const started = this.now()
    const reading = this.options.read(this.seq, this.latestValue?.snapshot).then((snapshot) => {
      this.latestValue = { snapshot, at: started }
      for (const listener of this.listeners) listener(snapshot)
      return snapshot
    })
    this.inFlight = reading
    void reading
      .catch(() => undefined)
      .finally(() => {
        if (this.inFlight === reading) this.inFlight = undefined
      })
    return reading
  }

  private async tick(): Promise<void> {
    this.timer = undefined
    this.running = !this.closed && this.listeners.size > 0
    if (!this.running) return
    const started = this.now()
    try {
      await (this.inFlight ?? this.poll())
    } catch (error) {
      this.options.onError?.(error)
    }
    this.running = !this.closed && this.listeners.size > 0
    if (!this.running) return
    const wait = Math.max(0, this.options.intervalMs - (this.now() - started))
    this.timer = setTimeout(() => void this.tick(), wait)
  }
}
