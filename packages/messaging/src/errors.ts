/** The message of `error`, or its string form when it is not an Error (for log lines and reasons). */
export const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error)

/** The string `code` of `error` (a SQLSTATE, a Node errno code), if it has one. */
export const errorCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
