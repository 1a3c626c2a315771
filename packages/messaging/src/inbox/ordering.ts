/**
 * Per-key order for handlers with `ordering: 'per-key'` (README, "Per-key order").
 *
 * The producer numbers each sequenced message 1, 2, ... per (routing key, key) in its enqueuing
 * transaction (`NEXT_SEQUENCE`), so for one key sequence order is commit order. The consumer keeps a
 * cursor per (handler, producer, key): the last sequence handled, and `held` (deliveries of the key
 * may wait in `ordering_waiting`). Each ordered delivery runs in one transaction that first moves
 * its cursor row (`MOVE_CURSOR`: to n when n is its next; sequence 1 makes the row; two instances
 * serialise per key there, and only there), then, by its number n against the cursor's last:
 *
 *   n == last + 1   (moved) run the handler; with COMMIT record the inbox pair and, when the cursor
 *                   was `marked` (held, blocked or settling), drop a held copy, clear the marks and
 *                   read whether n + 1 is held; ack. If it is, `release` drains the key.
 *   n <= last       a duplicate (handled or skipped before): commit, ack.
 *   n >  last + 1   hold it: store the delivery in `ordering_waiting` (same transaction); commit, ack.
 *
 * Under load many keys' deliveries share one transaction instead (ordering-batch.ts: one multi-row
 * move, no key twice; a delivery whose cursor did not move there comes back here).
 *
 * Draining (ordering-drain.ts) handles the held deliveries that are next, in this process, one
 * transaction each under the cursor's lock; one that fails there is put back into the queue (a
 * confirmed copy, as versions.ts holds a newer version) for the queue's retries and dead-lettering.
 * A sweep per ordered handler (ordering-sweep.ts) drains every key whose next delivery is held, so a
 * crash between a commit and its drain, or a key an operator skipped, loses nothing. Within one
 * process deliveries of a key take their transactions in arrival order (`OrderedRuntime.turn`).
 *
 * A key's order counts from the first delivery this handler sees of it. A new key whose first
 * delivery is sequence 1 starts at once; one first seen above 1 (numbered before the handler saw
 * it, e.g. a handler added to a running system) gets a settling cursor: its deliveries are held
 * for `startSettleMs`, then the sweep starts the cursor just below the lowest held one
 * (`START_SETTLED`, recorded as `settled_past`) and drains them in order. A predecessor that
 * begins its transaction only after that (delayed longer than the window in another instance, say)
 * is `late`: dead-lettered with the reason, never handled out of order nor taken for a duplicate. A first delivery whose handler fails starts its
 * cursor before it (`startKey`), so the window never passes over it.
 *
 * A failing message retries with backoff as any other (unacked, outside any transaction); its
 * successors are held meanwhile, every other key flows. When it is dead-lettered its cursor records
 * it (`blocked_by`, `blocked_since`): the key stays blocked until the operator requeues it (it is
 * then handled in order and the cursor moves on) or skips it (@saga/messaging-admin). A held
 * delivery whose predecessor has not come after `gapAfterMs` is reported as a gap.
 */

import type { ConsumeMessage, Message } from 'amqplib'
import { deferToCommit, execute, queryRows } from '../database.js'
import {
  ADVANCE_CURSOR,
  BLOCK_CURSOR,
  FINISH_MOVE,
  finishMove,
  FIRST_CURSOR,
  inboxInsert,
  MOVE_CURSOR,
  moveCursor,
  CREATE_CURSOR,
  HOLD_WAITING,
  LOCK_CURSOR,
  ORDERING_REPORT,
  START_CURSOR,
} from '../sql.js'
import type { ConsumedMessage, Database, InboxEntry, Logger, TransactionClient } from '../types.js'
import { recordInbox } from './inbox-record.js'

/** Settings of per-key order, ms. */
export interface OrderingSettings {
  /** How often each ordered handler's sweep runs (put back what is ready, report blocks and gaps). Default 5,000. */
  sweepMs: number
  /** A held delivery whose predecessor has not come after this long is reported as a gap. Default 300,000. */
  gapAfterMs: number
  /** A held delivery put back this long ago and still held is put back again. Default 30,000. */
  putBackAgainMs: number
  /**
   * A key first seen above sequence 1 (numbered before this handler saw it) holds its deliveries
   * this long, then its cursor starts just below the lowest held one; a predecessor that comes
   * later is dead-lettered. Set it above the longest a delivery may wait in a consumer for its
   * transaction (prefetch x handler time / concurrency). Default 30,000.
   */
  startSettleMs: number
}

/** The defaults of `OrderingSettings`. */
export const DEFAULT_ORDERING: OrderingSettings = {
  sweepMs: 5_000,
  gapAfterMs: 300_000,
  putBackAgainMs: 30_000,
  startSettleMs: 30_000,
}

/** The outcome of one ordered transaction. */
export type OrderedOutcome =
  /** `next()`: whether the next sequence of the key is held (known once the transaction committed). */
  | { kind: 'handled'; next: () => boolean }
  | { kind: 'duplicate' }
  | { kind: 'waiting' }
  /**
   * A predecessor that came after its key's cursor settled past it (`settledPast`): never handled
   * here, and too late to be handled in order. Nothing was written; the caller dead-letters it.
   */
  | { kind: 'late'; settledPast: number }

/** What the sweep found for one handler: blocked keys, held deliveries, keys with a gap. */
export interface OrderingReport {
  blocked: number
  waiting: number
  gaps: number
  /** Up to 10 gaps, the oldest first. */
  sample: Array<{ producer: string; key: string; lastSeq: string; firstWaiting: string; since: string }>
}

/** The cursor's identity of an ordered message: (handler, producer, key). */
export const cursorOf = (handler: string, message: ConsumedMessage): [string, string, string] => [
  handler,
  message.source,
  (message.ordering as { key: string }).key,
]

/**
 * Locks the cursor of (handler, producer, key) for the transaction, creating it at 0 (settling
 * when `settle`: its first delivery is above sequence 1); its last sequence, and where it started
 * when it settled (`settledPast`, 0 when it did not).
 */
export async function lockCursor(
  tx: TransactionClient,
  cursor: [string, string, string],
  settle = false,
): Promise<{ last: number; settledPast: number }> {
  type Row = { last_seq: string; settled_past: string }
  let [row] = await queryRows<Row>(tx, LOCK_CURSOR, cursor)
  if (!row) {
    await execute(tx, CREATE_CURSOR, [...cursor, settle])
    ;[row] = await queryRows<Row>(tx, LOCK_CURSOR, cursor)
  }
  return { last: Number(row?.last_seq ?? 0), settledPast: Number(row?.settled_past ?? 0) }
}

/** What a cursor's move answered (`MOVE_CURSOR`): no row when it did not move. */
type Moved = { moved: true; marked: boolean } | undefined
const movedOf = (result: { rows: unknown[] } | undefined): Moved => result?.rows[0] as Moved

/**
 * One ordered transaction of `message` (which has `ordering`) for `handler`: see the file's
 * comment. The cursor is moved first (`MOVE_CURSOR`, with BEGIN where the database can) and the
 * handler runs when it moved; then the inbox row, and when the cursor was `marked` (it may hold
 * deliveries, or was blocked or settling) the held copy's drop, the cursor's unblocking and
 * whether the next one is held, go with COMMIT where the database can (then `next` is read after
 * COMMIT). A cursor that did not
 * move is read under its lock: a duplicate, or an early delivery to hold. `original` is the
 * delivery, stored when it is held. Errors: the transaction's and `run`'s (all rolled back).
 */
export function inOrder<Tx extends TransactionClient>(
  database: Database<Tx>,
  handler: string,
  message: ConsumedMessage,
  original: Message,
  run: (tx: Tx) => Promise<void>,
): Promise<OrderedOutcome> {
  const cursor = cursorOf(handler, message)
  const sequence = (message.ordering as { sequence: number }).sequence
  let next = false
  const handled: OrderedOutcome = { kind: 'handled', next: () => next }
  const body = async (tx: Tx, moved: Moved): Promise<OrderedOutcome> => {
    if (!moved?.moved) {
      const outcome = await notMoved(tx, cursor, sequence, message, original)
      if (outcome !== 'next') return outcome
      // A new cursor, at this its first sequence: handle it, then move the cursor.
      await run(tx)
      next = movedNext(await queryRows(tx, ADVANCE_CURSOR, [...cursor, sequence, message.id]))
      return handled
    }
    await run(tx)
    // Nothing of the key held, nor blocked or settling: only the inbox pair to record.
    if (!moved.marked) await recordAtCommit(tx, [{ messageId: message.id, handler }])
    else await finishMarked(tx, cursor, sequence, message.id, (found) => (next = found))
    return handled
  }
  if (database.beginWith) {
    const move = moveCursor(cursor, sequence)
    return database.beginWith(move.sql, [move.command], (tx, [moved]) => body(tx, movedOf(moved)))
  }
  const [sql, params] = sequence === 1 ? [FIRST_CURSOR, cursor] : [MOVE_CURSOR, [...cursor, sequence]]
  return database.transaction(async (tx) => body(tx, movedOf({ rows: await queryRows(tx, sql, params) })))
}

const movedNext = (rows: unknown[]): boolean => (rows[0] as { next?: boolean } | undefined)?.next === true

/**
 * Records the inbox pairs of handled messages whose cursor moved unmarked: with COMMIT where the
 * database can (`deferToCommit`), else now (`recordInbox`). @throws the database's errors
 */
export async function recordAtCommit(tx: TransactionClient, entries: readonly InboxEntry[]): Promise<void> {
  if (deferToCommit(tx, inboxInsert(entries), 'INSERT', () => undefined)) return
  for (const { messageId, handler } of entries) await recordInbox(tx, messageId, handler)
}

/**
 * `FINISH_MOVE` for the message `messageId` with `sequence` on a moved, `marked` cursor: with COMMIT
 * where the database can (then `onNext` runs after COMMIT), else now. `onNext` gets whether the
 * key's next sequence is held. @throws the database's errors
 */
export async function finishMarked(
  tx: TransactionClient,
  cursor: readonly [string, string, string],
  sequence: number,
  messageId: string,
  onNext: (next: boolean) => void,
): Promise<void> {
  const finish = finishMove(cursor, sequence, messageId)
  if (deferToCommit(tx, finish, 'SELECT', (result) => onNext(movedNext(result.rows)))) return
  onNext(movedNext(await queryRows(tx, FINISH_MOVE, [...cursor, sequence, messageId])))
}

/** A key's identity within one handler: its producer and key, one string (a map key). */
export const keyId = (producer: string, key: string): string => `${producer}\u0000${key}`

/**
 * A cursor that did not move to `sequence`, read under its lock (made at 0 when new, settling when
 * `sequence` is above 1): a late predecessor of a settled key, a duplicate, an early delivery held
 * (on a settling cursor every delivery but sequence 1 is), or `'next'` (a new or settling cursor,
 * and this sequence 1).
 */
async function notMoved(
  tx: TransactionClient,
  cursor: [string, string, string],
  sequence: number,
  message: ConsumedMessage,
  original: Message,
): Promise<OrderedOutcome | 'next'> {
  const { last, settledPast } = await lockCursor(tx, cursor, sequence > 1)
  if (sequence <= settledPast) return { kind: 'late', settledPast }
  if (sequence <= last) return { kind: 'duplicate' }
  if (sequence === last + 1) return 'next'
  // Not the next (that one moves the cursor): hold it for its predecessor.
  const { content, properties } = original
  const params = [...cursor, sequence, message.id, message.routingKey, content, JSON.stringify(properties)]
  await execute(tx, HOLD_WAITING, params)
  return { kind: 'waiting' }
}

/**
 * Records that `message` was dead-lettered, blocking its key (unless the cursor is past it).
 * Never throws: a failure is logged (the key is still held back, and its gap is reported later).
 */
export async function blockKey<Tx extends TransactionClient>(
  database: Database<Tx>,
  handler: string,
  message: ConsumedMessage,
  reason: string,
  logger: Logger,
): Promise<void> {
  const cursor = cursorOf(handler, message)
  const sequence = (message.ordering as { sequence: number }).sequence
  try {
    await database.transaction((tx) => execute(tx, BLOCK_CURSOR, [...cursor, message.id, sequence, reason]))
  } catch (error) {
    logger.error({ err: error, messageId: message.id, handler }, 'recording the blocked key failed')
  }
  logger.error(
    { messageId: message.id, handler, producer: cursor[1], key: cursor[2], sequence },
    'ordered key blocked by a dead-lettered message: requeue or skip it (@saga/messaging-admin)',
  )
}

/**
 * After an ordered delivery's handler failed (its transaction rolled back): makes its key's cursor
 * start before it (`START_CURSOR`) when the key had none or was settling, so the settle window's
 * start never passes over a first message that is being retried. Never throws: a failure is logged.
 */
export async function startKey<Tx extends TransactionClient>(
  database: Database<Tx>,
  handler: string,
  message: ConsumedMessage,
  logger: Logger,
): Promise<void> {
  const sequence = (message.ordering as { sequence: number }).sequence
  try {
    await database.transaction((tx) => execute(tx, START_CURSOR, [...cursorOf(handler, message), sequence]))
  } catch (error) {
    logger.warn({ err: error, messageId: message.id, handler }, 'starting the key of a failed message failed')
  }
}

/** What puts a held delivery back into the handler's queue, confirmed (`ChannelSession.putBack`). */
export type PutBack = (delivery: ConsumeMessage, headers: Record<string, unknown>) => Promise<void>

/** The sweep's report for `handler` (`ORDERING_REPORT`). @throws the database's errors */
export async function orderingReport<Tx extends TransactionClient>(
  database: Database<Tx>,
  handler: string,
  settings: OrderingSettings,
): Promise<OrderingReport> {
  const [row] = await database.transaction((tx) =>
    queryRows<OrderingReport>(tx, ORDERING_REPORT, [handler, settings.gapAfterMs]),
  )
  return row ?? { blocked: 0, waiting: 0, gaps: 0, sample: [] }
}
