/** The message of `error`, or its string form when it is not an Error (for log lines and reasons). */
export const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error)

/**
 * `value` when it is a positive integer. `name` (and `unit`, e.g. ' of ms') say what in the error.
 * @throws RangeError `<name> must be a positive integer<unit>, got <value>`
 */
export function positiveInteger(name: string, value: number, unit = ''): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer${unit}, got ${value}`)
  return value
}

/** The string `code` of `error` (a SQLSTATE, a Node errno code), if it has one. */
export const errorCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
