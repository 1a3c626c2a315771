import type { Logger } from '@saga/messaging'

/** What the payment reactions need from the service. */
export interface ReactionDeps {
  logger: Logger
  /** The clock; tests pass a fixed one. Default `() => new Date()`. */
  now?: (() => Date) | undefined
}

export const clock = (deps: ReactionDeps): Date => (deps.now ?? (() => new Date()))()
