/** Thrown by `eventually` when the condition did not hold before the deadline. */
export class DeadlineError extends Error {
  constructor(what: string, timeoutMs: number, last: unknown) {
    super(
      `${what}: not reached within ${timeoutMs} ms${last === undefined ? '' : `; last: ${describe(last)}`}`,
    )
    this.name = 'DeadlineError'
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message
  try {
    return JSON.stringify(value).slice(0, 500)
  } catch {
    return String(value)
  }
}

/** Resolves after `ms` milliseconds; only for spacing polls, never as a wait for a fact. */
export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `probe` every `intervalMs` until it returns a value other than `undefined`/`false`, and
 * resolves with it. A probe that throws counts as "not yet" (a service still starting refuses
 * connections). Rejects with `DeadlineError` after `timeoutMs`, naming `what` and the last result.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
      last = value
    } catch (error) {
      last = error
    }
    if (Date.now() >= deadline) throw new DeadlineError(what, timeoutMs, last)
    await delay(intervalMs)
  }
}
