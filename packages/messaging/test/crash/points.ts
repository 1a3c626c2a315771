/** What the crash matrix's producer process and the test share: the points and the message. */
import type { OutgoingMessage } from '../../src/types.js'

/**
 * Where the producer stops (`test/crash/producer.ts`). Publish on commit: `after-insert` (enqueue's
 * INSERT ran in a transaction the caller began, no COMMIT yet), `before-commit` (a
 * `messaging.transaction` whose COMMIT, with the deferred INSERT, is about to be sent),
 * `after-commit` (committed and held, about to publish), `after-confirm` (confirmed, about to
 * mark). The relay's sweep, holding the claimed rows' locks: `sweep-after-claim`,
 * `sweep-after-confirm` (about to mark). "After publish, before confirm" needs no point in the
 * process: the broker's confirms are silenced on the way (`TcpProxy.silence('fromTarget')`).
 */
export type CrashPoint =
  | 'after-insert'
  | 'before-commit'
  | 'after-commit'
  | 'after-confirm'
  | 'sweep-after-claim'
  | 'sweep-after-confirm'

/** The matrix's message: `test.happened.v1` (the inbox fixture's contract) with `n`. */
export const crashMessage = (n: number): OutgoingMessage<{ n: number }> => ({
  type: 'test.happened.v1',
  routingKey: 'test.happened',
  payload: { n },
  aggregateId: `crash-${n}`,
  correlationId: `crash-${n}`,
})
