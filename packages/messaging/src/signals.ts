import type { SignalMap, SignalName } from './types.js'

/** A listener for one signal. */
export type SignalListener<K extends SignalName> = (payload: SignalMap[K]) => void

/**
 * Typed signals (see `SignalMap`): what messaging reports as it works, so tests and the e2e suite
 * wait on facts (published, handled, dead-lettered) instead of sleeping.
 */
export interface Signals {
  on<K extends SignalName>(name: K, listener: SignalListener<K>): () => void
  off<K extends SignalName>(name: K, listener: SignalListener<K>): void
  emit<K extends SignalName>(name: K, payload: SignalMap[K]): void
  /**
   * Resolves with the first payload of `name` for which `predicate` holds (emitted after the call).
   * Rejects with `SignalTimeoutError` after `timeoutMs` milliseconds.
   */
  waitFor<K extends SignalName>(
    name: K,
    predicate?: (payload: SignalMap[K]) => boolean,
    timeoutMs?: number,
  ): Promise<SignalMap[K]>
}

/** Thrown by `waitFor` when no matching signal came within the timeout. */
export class SignalTimeoutError extends Error {
  constructor(
    readonly signal: SignalName,
    readonly timeoutMs: number,
  ) {
    super(`no matching '${signal}' signal within ${timeoutMs} ms`)
    this.name = 'SignalTimeoutError'
  }
}

/**
 * Creates a signal hub. Listener errors never reach the emitter. A listener is held once per signal
 * name: added twice, called once; removed from one name, it still hears the others.
 */
export function createSignals(): Signals {
  const listeners = new Map<SignalName, Set<(payload: never) => void>>()
  const signals: Signals = {
    on(name, listener) {
      const forName = listeners.get(name) ?? new Set()
      listeners.set(name, forName.add(listener))
      return () => signals.off(name, listener)
    },
    off(name, listener) {
      listeners.get(name)?.delete(listener)
    },
    emit(name, payload) {
      const forName = listeners.get(name)
      if (!forName) return
      // A copy, as EventEmitter makes: a listener added or removed during the emit counts from the next.
      for (const listener of [...forName]) {
        try {
          listener(payload as never)
        } catch {
          // deliberately ignored: see createSignals
        }
      }
    },
    waitFor(name, predicate = () => true, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const listener = (payload: SignalMap[typeof name]): void => {
          if (!predicate(payload)) return
          clearTimeout(timer)
          signals.off(name, listener)
          resolve(payload)
        }
        const timer = setTimeout(() => {
          signals.off(name, listener)
          reject(new SignalTimeoutError(name, timeoutMs))
        }, timeoutMs)
        signals.on(name, listener)
      })
    },
  }
  return signals
}
