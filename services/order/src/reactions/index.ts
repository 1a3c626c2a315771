import type { HandlerDefinition, Logger } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'

/** What the reactions need from the service. */
export interface ReactionDeps {
  logger: Logger
}

/** Everything the order service consumes, one handler (and one queue) each. */
export const orderReactions = (_deps: ReactionDeps): HandlerDefinition<Tx>[] => []
