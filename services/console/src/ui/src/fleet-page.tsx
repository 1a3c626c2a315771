import { ORDER_STATUSES, WAITING_FOR } from '@saga/contracts/order-states'
import { useConsole } from './context.js'
import { useMemo } from 'react'
import type { FleetSnapshot, OrderSummary, ServiceSnapshot } from './api.js'
import { TimeChart, type Line } from './chart.js'
import { duration, timeOfDay } from './format.js'
import { useLiveFleet } from './live.js'
import { OrdersTable } from './orders-table.js'

/** The stats window the poller asks for (`/orders/stats?windowSeconds=300`), s. */
const WINDOW_S = 300

function Count({
  label,
  value,
  testId,
}: {
  label: string
  value: number | null | undefined
  testId: string
}) {
  return (
    <div className="count">
      <div className="value" data-testid={testId}>
        {value ?? '–'}
      </div>
      <div className="label">{label}</div>
    </div>
  )
}

/** Orders per state, PENDING per step, and the overdue ones. */
function OrderCounts({ snapshot }: { snapshot: FleetSnapshot }) {
  const stats = snapshot.orders.stats
  return (
    <section className="card">
      <h2>Orders now</h2>
      {snapshot.orders.error !== null && <div className="warning">{snapshot.orders.error}</div>}
      <div className="counts">
        {ORDER_STATUSES.map((status) => (
          <Count
            key={status}
            label={status}
            value={stats?.byStatus[status]}
            testId={`fleet-count-${status}`}
          />
        ))}
        {WAITING_FOR.map((step) => (
          <Count
            key={step}
            label={`waiting for ${step}`}
            value={stats?.pendingByStep[step]}
            testId={`fleet-pending-${step}`}
          />
        ))}
        <Count label="past their deadline" value={stats?.pendingOverdue} testId="fleet-pending-overdue" />
      </div>
    </section>
  )
}

/** Completed orders per second and latency (p50, p99) over the stats window (10-second buckets). */
function Charts({ snapshot }: { snapshot: FleetSnapshot }) {
  const buckets = snapshot.orders.stats?.buckets
  const statsAt = snapshot.orders.stats?.at
  // The whole window, also while it is still filling: the last WINDOW_S seconds up to the stats' time.
  const xRange = useMemo((): [number, number] | undefined => {
    if (statsAt === undefined) return undefined
    const end = Date.parse(statsAt) / 1000
    return [end - WINDOW_S, end]
  }, [statsAt])
  const { times, rate, latency } = useMemo(() => {
    const list = buckets ?? []
    const perSecond = (n: number) => n / 10
    return {
      times: list.map((b) => Date.parse(b.at) / 1000),
      rate: [
        { label: 'confirmed/s', stroke: '#15803d', values: list.map((b) => perSecond(b.confirmed)) },
        { label: 'cancelled/s', stroke: '#b91c1c', values: list.map((b) => perSecond(b.cancelled)) },
      ] satisfies Line[],
      latency: [
        { label: 'p50 ms', stroke: '#2563eb', values: list.map((b) => b.latencyP50Ms) },
        { label: 'p99 ms', stroke: '#c2410c', values: list.map((b) => b.latencyP99Ms) },
      ] satisfies Line[],
    }
  }, [buckets])
  return (
    <div className="grid">
      <section className="card">
        <h2>Completed per second</h2>
        <TimeChart times={times} lines={rate} unit="orders/s" testId="chart-completed" xRange={xRange} />
      </section>
      <section className="card">
        <h2>Latency, created → final</h2>
        <TimeChart times={times} lines={latency} unit="ms" testId="chart-latency" xRange={xRange} />
      </section>
    </div>
  )
}

function ServiceRow({ s }: { s: ServiceSnapshot }) {
  const outbox = s.messaging?.outbox
  return (
    <tr data-testid="service-row" data-service={s.service} data-health={s.health}>
      <td>{s.service}</td>
      <td className={`health-${s.health}`} data-testid="service-health">
        {s.health}
      </td>
      <td data-testid="service-reason">{s.reason ?? ''}</td>
      <td className="num" data-testid="outbox-pending">
        {outbox?.pending ?? '–'}
      </td>
      <td className="num" data-testid="outbox-oldest-age">
        {duration(outbox?.oldestPendingAgeMs)}
      </td>
      <td className="num" data-testid="outbox-parked">
        {outbox?.parked ?? '–'}
      </td>
      <td>{s.messaging?.broker ?? '–'}</td>
    </tr>
  )
}

/**
 * One service's rows of the queues table. Live figures as read; while its summary cannot be read,
 * the last figures read, muted and marked `data-stale="true"` with the time they were read (its
 * messages wait in these queues, so they stay on the page); one `queue-unknown` row when the
 * console has not read them since it started.
 */
function QueueRows({ s }: { s: ServiceSnapshot }) {
  const { zone } = useConsole()
  const { state, readAt, items } = s.queues
  if (state === 'unknown')
    return (
      <tr data-testid="queue-unknown" data-service={s.service} className="stale">
        <td colSpan={4}>
          {s.service} {s.health}: its queues are unknown, not read since the console started
        </td>
      </tr>
    )
  const stale = state === 'stale'
  return items.map((q) => (
    <tr
      key={q.queue}
      data-testid="queue-row"
      data-queue={q.queue}
      data-service={s.service}
      data-stale={stale}
      className={stale ? 'stale' : undefined}
    >
      <td className="mono">
        {q.queue}
        {stale && (
          <div className="stale-note" data-testid="queue-as-of" data-read-at={readAt ?? ''}>
            as of {timeOfDay(readAt, zone)}, {s.service} {s.health}
          </div>
        )}
      </td>
      <td className="num">{q.ready ?? '–'}</td>
      <td className="num">{q.consumers ?? '–'}</td>
      <td className="num" data-testid="queue-dead-lettered">
        {q.deadLettered ?? '–'}
      </td>
    </tr>
  ))
}

function Services({ services }: { services: ServiceSnapshot[] }) {
  return (
    <div className="grid">
      <section className="card">
        <h2>Services</h2>
        <table data-testid="services">
          <thead>
            <tr>
              <th>service</th>
              <th>health</th>
              <th>reason</th>
              <th className="num">outbox pending</th>
              <th className="num">oldest pending</th>
              <th className="num">parked</th>
              <th>broker</th>
            </tr>
          </thead>
          <tbody>
            {services.map((s) => (
              <ServiceRow key={s.service} s={s} />
            ))}
          </tbody>
        </table>
      </section>
      <section className="card">
        <h2>Queues</h2>
        <table data-testid="queues">
          <thead>
            <tr>
              <th>queue</th>
              <th className="num">ready</th>
              <th className="num">consumers</th>
              <th className="num">dead-lettered</th>
            </tr>
          </thead>
          <tbody>
            {services.map((s) => (
              <QueueRows key={s.service} s={s} />
            ))}
          </tbody>
        </table>
      </section>
    </div>
  )
}

/** `/`: the fleet now, live over SSE: orders per state, charts, services, queues, recent orders. */
export function FleetPage() {
  const { snapshot, connected } = useLiveFleet()
  const { zone } = useConsole()
  return (
    <>
      <h1>
        Fleet{' '}
        <small
          className="muted"
          data-testid="live-status"
          data-connected={connected}
          data-seq={snapshot?.seq ?? 0}
        >
          <span className={`live-dot${connected ? ' connected' : ''}`} />
          {connected ? 'live' : 'reconnecting'}
          {snapshot && ` · poll ${snapshot.seq} at ${timeOfDay(snapshot.at, zone)}`}
        </small>
      </h1>
      {snapshot === null ? (
        <p className="muted">Waiting for the first poll…</p>
      ) : (
        <>
          <OrderCounts snapshot={snapshot} />
          <Charts snapshot={snapshot} />
          <Services services={snapshot.services} />
          <section className="card">
            <h2>Most recent orders</h2>
            <OrdersTable orders={snapshot.orders.recent ?? ([] as OrderSummary[])} testId="recent-orders" />
          </section>
        </>
      )}
    </>
  )
}
