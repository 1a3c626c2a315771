/**
 * The saga as a Restate workflow (https://docs.restate.dev) with durable steps (`ctx.run`): the
 * Restate server journals every step's result before the handler goes on and replays the journal
 * on a retry, so a step's effect runs at least once and its result is used once; the effects are
 * idempotent by order id (store.ts). Compensations follow Restate's saga guide: each step that
 * succeeded pushes its undo, a business refusal is a `TerminalError`, and the handler runs the
 * undos in reverse before cancelling the order.
 */
import http2 from 'node:http2'
import * as restate from '@restatedev/restate-sdk'
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

// The SDK calls Promise.withResolvers (Node 22+, the repository's engines); this machine's Node 20
// lacks it. Same semantics as the built-in, installed only where it is missing.
const promises = Promise as unknown as { withResolvers?: unknown }
promises.withResolvers ??= function withResolvers<T>() {
  let resolve!: (value: T) => void
  let reject!: (reason?: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** The workflow's name in Restate; one workflow per order id. */
const WORKFLOW = 'OrderSaga'

function orderSaga(pool: pg.Pool) {
  const sql = clientSql(pool)
  return restate.workflow({
    name: WORKFLOW,
    handlers: {
      run: async (ctx: restate.WorkflowContext, order: Order): Promise<void> => {
        const undo: Array<() => Promise<unknown>> = []
        try {
          const paid = await ctx.run('charge', () => charge(sql, order))
          if (!paid.captured) throw new restate.TerminalError(paid.reason!)
          undo.push(() => ctx.run('refund', () => refund(sql, order.id)))
          const held = await ctx.run('reserve', () =>
            inTransaction(pool, (tx) => reserve(tx, order.id, order.items)),
          )
          if (!held.reserved) throw new restate.TerminalError(held.reason!)
          undo.push(() => ctx.run('release', () => inTransaction(pool, (tx) => release(tx, order.id))))
          const booked = await ctx.run('ship', () => ship(sql, order))
          if (!booked.shipped) throw new restate.TerminalError(booked.reason!)
          await ctx.run('confirm', () => finish(sql, order.id))
        } catch (error) {
          if (!(error instanceof restate.TerminalError)) throw error
          for (const step of undo.reverse()) await step()
          await ctx.run('cancel', () => finish(sql, order.id, error.message))
        }
      },
    },
  })
}

/**
 * Serves the workflow's endpoint on 127.0.0.1:`endpointPort` (HTTP/2, for the Restate server to
 * call) and accepts an order by recording it, then submitting its workflow to the server's ingress
 * (`ingressUrl`, `POST /OrderSaga/<order id>/run/send`), which answers once the server has logged
 * the invocation. The order row and the submission are two commits: a crash between them leaves a
 * PENDING order without a workflow. The harness registers the endpoint with the server's admin API.
 */
export async function startRestate(pool: pg.Pool, endpointPort: number, ingressUrl: string): Promise<Peer> {
  const endpoint = restate.endpoint().bind(orderSaga(pool))
  const server = http2.createServer(endpoint.http2Handler())
  // The Restate server keeps its HTTP/2 sessions open; stop() ends them so close() can finish.
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  await new Promise<void>((resolve) => server.listen(endpointPort, '127.0.0.1', resolve))
  return {
    async accept(order) {
      await insertOrder(clientSql(pool), order)
      const res = await fetch(`${ingressUrl}/${WORKFLOW}/${order.id}/run/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(order),
      })
      if (!res.ok) throw new Error(`Restate ingress answered ${res.status}: ${await res.text()}`)
      await res.arrayBuffer()
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const session of sessions) session.destroy()
      }),
  }
}
