import { useCallback, useEffect, useState } from 'react'
import { useActionFlow } from './actions.js'
import { api, ApiError, type OrderDetail } from './api.js'
import { canAct as mayAct, errorMessage, useConsole } from './context.js'
import { dateTime, duration, money } from './format.js'
import { traceLink } from './fact-detail.js'
import { FactPanel } from './fact-panel.js'
import { ChoreographyGraph } from './graph.js'
import { HopsTable } from './hops.js'
import { orderReadFailure } from './messages.js'
import { DeadLetters, ParkedRows } from './repair.js'

/** How often a PENDING order's page is read again, ms (a final one is not). */
const REFRESH_PENDING_MS = 3_000

function Header({ detail, now }: { detail: OrderDetail; now: number }) {
  const { zone } = useConsole()
  const { order, deadline } = detail
  const left = deadline.timeLeftMs === null ? null : deadline.timeLeftMs - (now - Date.parse(detail.at))
  return (
    <section className="card">
      <div className="counts">
        <div className="count">
          <div className={`value status-${order.status}`} data-testid="order-status">
            {order.status}
          </div>
          <div className="label">{order.cancellationReason ?? order.waitingFor ?? ''}</div>
        </div>
        <div className="count">
          <div className="value">{money(order.total, order.currency)}</div>
          <div className="label">placed {dateTime(order.createdAt, zone)}</div>
        </div>
        <div className="count">
          <div className="value" data-testid="order-deadline">
            {dateTime(deadline.deadlineAt, zone)}
          </div>
          <div className="label">deadline</div>
        </div>
        {left !== null && (
          <div className="count">
            <div
              className={`value${left < 0 ? ' health-down' : ''}`}
              data-testid="order-time-left"
              data-ms={Math.round(left)}
            >
              {left < 0 ? `overdue ${duration(-left)}` : duration(left)}
            </div>
            <div className="label">time left</div>
          </div>
        )}
      </div>
    </section>
  )
}

function RecordedActions({ detail }: { detail: OrderDetail }) {
  const { zone } = useConsole()
  return (
    <table data-testid="recorded-actions">
      <thead>
        <tr>
          <th>at</th>
          <th>service</th>
          <th>actor</th>
          <th>action</th>
          <th>target</th>
          <th className="num">ids</th>
        </tr>
      </thead>
      <tbody>
        {detail.actions.map((a) => (
          <tr key={`${a.service}-${a.id}`} data-testid="recorded-action-row" data-action={a.action}>
            <td>{dateTime(a.at, zone)}</td>
            <td>{a.service}</td>
            <td>{a.actor}</td>
            <td>{a.action}</td>
            <td className="mono">{a.target}</td>
            <td className="num">{a.ids.length}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** The causal graph and the steps ahead; a click on a fact's node opens its panel below it. */
function Choreography({ detail, now }: { detail: OrderDetail; now: number }) {
  const [selectedId, setSelectedId] = useState<string | null>(null)
  const selected = detail.nodes.find((n) => n.id === selectedId) ?? null
  return (
    <>
      <section className="card">
        <h2>Choreography</h2>
        <p className="legend muted">
          <span className="branch-forward">━ forward chain</span>
          <span className="branch-compensation">╍ compensation branch (failures and undos)</span>
          <span>purple outline: late fact</span>
          <span>red ring: dead-lettered or parked</span>
          <span className="branch-ahead">┈ steps ahead (saga map); amber: waited for, and why</span>
        </p>
        <ChoreographyGraph
          facts={detail.nodes}
          edges={detail.edges}
          ahead={detail.ahead}
          now={now}
          at={Date.parse(detail.at)}
          selectedId={selectedId}
          onSelect={setSelectedId}
        />
      </section>
      {selected !== null && (
        <FactPanel
          fact={selected}
          traceUrlTemplate={detail.traceUrlTemplate}
          onClose={() => setSelectedId(null)}
        />
      )}
    </>
  )
}

/**
 * Reads the order, again every few seconds while it is PENDING; `now` ticks for the time left.
 * `failure` is what the page shows when it has no order to show after a failed read
 * (`orderReadFailure`): an unknown order is said once, on the page; other failures also go to the banner.
 */
function useOrder(id: string) {
  const { reportError } = useConsole()
  const [detail, setDetail] = useState<OrderDetail | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const [now, setNow] = useState(Date.now())
  const load = useCallback(() => {
    api
      .order(id)
      .then((d) => {
        setDetail(d)
        setFailure(null)
        setNow(Date.now())
      })
      .catch((error: unknown) => {
        const status = error instanceof ApiError ? error.status : null
        const said = orderReadFailure(id, status, errorMessage(error))
        // An unknown order has nothing left to show; after any other failure the order read before stays.
        if (status === 404) setDetail(null)
        setFailure(said.page)
        if (said.banner !== null) reportError(said.banner)
      })
  }, [id, reportError])
  useEffect(load, [load])
  const pending = detail?.order.status === 'PENDING'
  useEffect(() => {
    if (!pending) return
    const reload = setInterval(load, REFRESH_PENDING_MS)
    const tick = setInterval(() => setNow(Date.now()), 1_000)
    return () => {
      clearInterval(reload)
      clearInterval(tick)
    }
  }, [pending, load])
  return { detail, failure, now, load }
}

/** `/orders/:id`: the order's choreography, hops, dead letters and parked rows with actions, and its actions. */
export function OrderPage({ id }: { id: string }) {
  const { session } = useConsole()
  const { detail, failure, now, load } = useOrder(id)
  const flow = useActionFlow(load)
  if (detail === null && failure !== null)
    return (
      <p className="muted" data-testid="order-unavailable">
        {failure}
      </p>
    )
  if (detail === null) return <p className="muted">Loading order {id}…</p>
  const canAct = mayAct(session)
  const template = detail.traceUrlTemplate
  const traceUrl = (messageId: string) =>
    traceLink(template, detail.nodes.find((n) => n.id === messageId)?.traceId ?? null)
  return (
    <>
      <h1>
        Order <span className="mono">{detail.order.id}</span>
      </h1>
      {Object.entries(detail.sources)
        .filter(([, s]) => !s.ok)
        .map(([service, s]) => (
          <div key={service} className="warning" data-testid="source-warning" data-service={service}>
            {service} could not be read: {s.reason}. What it knows of this order is missing.
          </div>
        ))}
      <Header detail={detail} now={now} />
      {canAct && detail.order.status === 'PENDING' && (
        <div className="actions-bar">
          <button
            data-testid="action-cancel"
            className="danger"
            disabled={flow.busy}
            onClick={() =>
              flow.start('cancel', [{ kind: 'cancel', service: 'order', ids: [detail.order.id] }])
            }
          >
            Cancel this order
          </button>
        </div>
      )}
      {flow.panel}
      <Choreography detail={detail} now={now} />
      <section className="card">
        <h2>Hops</h2>
        <HopsTable facts={detail.nodes} traceUrl={traceUrl} sources={detail.sources} />
      </section>
      <div className="grid">
        <section className="card">
          <h2>Dead letters</h2>
          <DeadLetters rows={detail.deadLetters} canAct={canAct} busy={flow.busy} start={flow.start} />
        </section>
        <section className="card">
          <h2>Parked outbox rows</h2>
          <ParkedRows rows={detail.parked} canAct={canAct} busy={flow.busy} start={flow.start} />
        </section>
      </div>
      <section className="card">
        <h2>Recorded actions</h2>
        <RecordedActions detail={detail} />
      </section>
    </>
  )
}
