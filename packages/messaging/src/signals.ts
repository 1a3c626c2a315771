import { EventEmitter } from 'node:events'
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
 * Creates a signal hub. Listener errors are swallowed and never reach the emitter (a test's
 * listener must not break the relay or a consumer that emitted the signal).
 */
export function createSignals(): Signals {
  const emitter = new EventEmitter()
  // Many tests and the e2e suite wait on the same signal at once; this is not a leak.
  emitter.setMaxListeners(0)
  // Per signal name, so one function registered for two signals is removed from each separately.
  const wrapped = new Map<SignalName, WeakMap<(payload: never) => void, (payload: unknown) => void>>()
  const wrappers = (name: SignalName): WeakMap<(payload: never) => void, (payload: unknown) => void> => {
    let map = wrapped.get(name)
    if (!map) wrapped.set(name, (map = new WeakMap()))
    return map
  }

  const signals: Signals = {
    on(name, listener) {
      const safe = (payload: unknown): void => {
        try {
          listener(payload as never)
        } catch {
          // deliberately ignored: see createSignals
        }
      }
      wrappers(name).set(listener, safe)
      emitter.on(name, safe)
      return () => signals.off(name, listener)
    },
    off(name, listener) {
      const safe = wrappers(name).get(listener)
      if (safe) emitter.off(name, safe)
    },
    emit(name, payload) {
      emitter.emit(name, payload)
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
