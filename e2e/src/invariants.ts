import { judge, type InvariantReport } from './checks.js'
import type { Fleet } from './fleet.js'
import type { Ledger } from './ledger.js'
import { incomplete, snapshot, type Snapshot } from './snapshot.js'
import { eventually } from './wait.js'
import type { TapQueue } from '@saga/testkit'

export type { InvariantReport } from './checks.js'

/**
 * What `checkInvariants` reads of a fleet: its four databases and a tap counting each message id
 * (an e2e `Fleet`, or a compose fleet's databases with a tap of its own).
 */
export type Judged = Pick<Fleet, 'dbs'> & { tap?: Pick<TapQueue, 'countsById'> | undefined }

/** Options of `checkInvariants`. */
export interface InvariantOptions {
  /**
   * Accept a message id published more than once (at-least-once delivery after a kill -9 between
   * the broker's confirm and the relay's commit). Such republishes are counted, not failed.
   */
  allowRepublish?: boolean
  /** How long the fleet may take to settle (every saga complete, every outbox drained). */
  settleMs?: number
}

/**
 * Waits until the fleet settled (every saga complete, no pending outbox row, the tap saw every
 * published row), then checks the saga's invariants across the four databases and the tap:
 * - every order placed exists and is terminal, and no other order exists;
 * - books: captured - refunded = total of confirmed orders; per order one capture at most, at most
 *   one refund and only for a cancelled order; reserved stock = quantities of confirmed orders per
 *   SKU and available + reserved = the stock the test set; one reservation per line of a confirmed
 *   order, none held by a cancelled one; one live shipment per confirmed order and no live one for a
 *   cancelled order (CANCELLED shipments allowed); every cancelled order recorded as cancelled by
 *   payment, inventory and shipment (each undid its own effect); an order cancelled by its deadline or
 *   its customer is judged by these books, not by a fixed list of facts (chain.ts);
 * - every fact at most once per order in the outboxes;
 * - no pending or parked outbox row;
 * - every published row seen by the tap exactly once (or at least once with `allowRepublish`),
 *   beyond the copies the test published itself; nothing on the exchange that no outbox wrote.
 */
export async function checkInvariants(
  fleet: Judged,
  ledger: Ledger,
  { allowRepublish = false, settleMs = 60_000 }: InvariantOptions = {},
): Promise<InvariantReport> {
  const tap = fleet.tap
  if (!tap) throw new Error('fleet has no tap')
  let s: Snapshot | undefined
  try {
    s = await eventually(
      'fleet settled (sagas complete, outboxes drained, tap caught up)',
      async () => {
        const snap = await snapshot(fleet)
        const open = incomplete(snap)
        const unpublished = snap.outbox.filter((r) => !r.published && !r.parked)
        const seen = tap.countsById()
        const untapped = snap.outbox.filter((r) => r.published && !seen.has(r.id))
        return open.length || unpublished.length || untapped.length ? false : snap
      },
      { timeoutMs: settleMs, intervalMs: 250 },
    )
  } catch {
    s = await snapshot(fleet) // check what is there; the violations name what did not settle
  }
  return judge(s, ledger, tap.countsById(), allowRepublish)
}
