/**
 * The saga as one DBOS Transact workflow (https://docs.dbos.dev) with a checkpointed step per
 * effect, on PostgreSQL: DBOS records each step's result in its system database (schema `dbos` of
 * the peer's own database) before the workflow goes on, and a workflow interrupted by a crash is
 * recovered from its last completed step when the process starts again. Steps are at-least-once
 * (a crash after the effect and before the checkpoint runs it again), so the effects are
 * idempotent by order id (store.ts). Steps retry on errors (DBOS's retry policy, 5 attempts).
 */
import { DBOS } from '@dbos-inc/dbos-sdk'
import type pg from 'pg'
import type { Peer } from '../api.js'
import type { Order } from '../rules.js'
import {
  charge,
  clientSql,
  finish,
  inTransaction,
  insertOrder,
  refund,
  release,
  reserve,
  ship,
} from '../store.js'

const RETRIES = { retriesAllowed: true, maxAttempts: 5, intervalSeconds: 0.1 }

/** Registers the workflow against `pool` (the business tables); done once per process. */
function orderSaga(pool: pg.Pool) {
  const sql = clientSql(pool)
  const step = <T>(name: string, run: () => Promise<T>) => DBOS.runStep(run, { name, ...RETRIES })
  return DBOS.registerWorkflow(
    async (order: Order): Promise<void> => {
      const paid = await step('charge', () => charge(sql, order))
      if (!paid.captured) return step('cancel', () => finish(sql, order.id, paid.reason))
      const held = await step('reserve', () =>
        inTransaction(pool, (tx) => reserve(tx, order.id, order.items)),
      )
      if (!held.reserved) {
        await step('refund', () => refund(sql, order.id))
        return step('cancel', () => finish(sql, order.id, held.reason))
      }
      const booked = await step('ship', () => ship(sql, order))
      if (!booked.shipped) {
        await step('release', () => inTransaction(pool, (tx) => release(tx, order.id)))
        await step('refund', () => refund(sql, order.id))
        return step('cancel', () => finish(sql, order.id, booked.reason))
      }
      await step('confirm', () => finish(sql, order.id))
    },
    { name: 'orderSaga' },
  )
}

/**
 * Launches DBOS with its system database in the peer's database (`databaseUrl`) and accepts an
 * order by recording it, then starting its workflow with the order id as the workflow id (so a
 * second start of the same order is the same workflow). The order row and the workflow's start are
 * two commits: a crash between them leaves a PENDING order without a workflow.
 */
export async function startDbos(databaseUrl: string, pool: pg.Pool): Promise<Peer> {
  DBOS.setConfig({ name: 'order-saga-peer', systemDatabaseUrl: databaseUrl, logLevel: 'warn' })
  const saga = orderSaga(pool)
  await DBOS.launch()
  return {
    async accept(order) {
      await insertOrder(clientSql(pool), order)
      await DBOS.startWorkflow(saga, { workflowID: order.id })(order)
    },
    stop: () => DBOS.shutdown(),
  }
}
