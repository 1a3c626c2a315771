/**
 * Polls `probe` every 25 ms until it returns true, for a state no event announces (a row written,
 * a queue drained). Resolves once it does; rejects with `not within <timeoutMs> ms: <what>`
 * otherwise. The default timeout (30 s) only ends a hang: a loaded machine may take seconds for
 * what takes milliseconds, so a test never asserts on how long it took.
 */
export async function eventually(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await probe()) return
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
