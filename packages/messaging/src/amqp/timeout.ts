/** Thrown by `withTimeout` when the promise did not settle in time. */
export class TimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what} timed out after ${timeoutMs} ms`)
    this.name = 'TimeoutError'
  }
}

/**
 * Settles like `promise`, or rejects with `TimeoutError` after `timeoutMs` ms. The original promise
 * keeps running (JavaScript cannot cancel it); callers clean up what it may still produce.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, timeoutMs)), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
