import { useConsole } from './context.js'
import { useState } from 'react'
import type { PlannedRequest } from './actions.js'
import type { PlacedDeadLetter, PlacedRecord } from './api.js'
import { clock, factName } from './format.js'

/** Toggles `id` in a set held in state. */
function useSelection() {
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })
  return { selected, toggle, clear: () => setSelected(new Set()) }
}

/** The requests for the selected dead letters: one per service and queue. */
function perQueue(
  letters: PlacedDeadLetter[],
  selected: Set<string>,
  kind: 'requeue' | 'discard',
): PlannedRequest[] {
  const groups = new Map<string, PlannedRequest>()
  for (const letter of letters) {
    if (letter.messageId === null || !selected.has(letter.messageId)) continue
    const key = `${letter.service}\u0000${letter.queue}`
    const group = groups.get(key) ?? { kind, service: letter.service, queue: letter.queue, ids: [] }
    group.ids.push(letter.messageId)
    groups.set(key, group)
  }
  return [...groups.values()]
}

/** Props of the repair tables: the rows, whether the actor may act, and how to start an action. */
interface RepairProps<T> {
  rows: T[]
  canAct: boolean
  busy: boolean
  start: (kind: PlannedRequest['kind'], requests: PlannedRequest[]) => void
}

/** One dead letter; a letter without a message id cannot be selected (the admin routes pick by id). */
function DeadLetterRow(props: {
  letter: PlacedDeadLetter
  canAct: boolean
  selected: boolean
  toggle: (id: string) => void
}) {
  const { letter: d, canAct, selected, toggle } = props
  const { zone } = useConsole()
  const id = d.messageId
  return (
    <tr
      data-testid="dead-letter-row"
      data-message-id={id ?? undefined}
      data-queue={d.queue}
      data-service={d.service}
    >
      {canAct && (
        <td>
          {id === null ? (
            <span title="no message id: move it with the broker's own tools" aria-label="not selectable">
              –
            </span>
          ) : (
            <input
              type="checkbox"
              data-testid="dead-letter-select"
              aria-label={`select ${id}`}
              checked={selected}
              onChange={() => toggle(id)}
            />
          )}
        </td>
      )}
      <td title={id ?? 'no message id'}>
        {d.routingKey === null ? (d.type ?? 'unknown') : factName(d.type ?? d.routingKey)}
      </td>
      <td className="mono">
        {d.service} / {d.queue}
      </td>
      <td className="mono">{d.handler}</td>
      <td>{d.reason}</td>
      <td className="mono">{clock(d.deadLetteredAt, zone)}</td>
    </tr>
  )
}

/** The order's dead letters, selectable, with requeue and discard (dry run first). */
export function DeadLetters({ rows, canAct, busy, start }: RepairProps<PlacedDeadLetter>) {
  const { selected, toggle, clear } = useSelection()
  const act = (kind: 'requeue' | 'discard') => {
    start(kind, perQueue(rows, selected, kind))
    clear()
  }
  return (
    <>
      {canAct && (
        <div className="actions-bar">
          <button
            data-testid="action-requeue"
            disabled={busy || selected.size === 0}
            onClick={() => act('requeue')}
          >
            Requeue {selected.size}
          </button>
          <button
            data-testid="action-discard"
            className="danger"
            disabled={busy || selected.size === 0}
            onClick={() => act('discard')}
          >
            Discard {selected.size}
          </button>
        </div>
      )}
      <table data-testid="dead-letters">
        <thead>
          <tr>
            {canAct && <th />}
            <th>fact</th>
            <th>service / queue</th>
            <th>handler</th>
            <th>reason</th>
            <th>dead-lettered</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d, i) => (
            <DeadLetterRow
              key={`${d.queue}-${d.messageId ?? i}`}
              letter={d}
              canAct={canAct}
              selected={d.messageId !== null && selected.has(d.messageId)}
              toggle={toggle}
            />
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted">No dead letters for this order.</p>}
    </>
  )
}

/** The order's parked outbox rows, selectable, with retry (dry run first). */
export function ParkedRows({ rows, canAct, busy, start }: RepairProps<PlacedRecord>) {
  const { zone } = useConsole()
  const { selected, toggle, clear } = useSelection()
  const retry = () => {
    const services = [...new Set(rows.filter((r) => selected.has(r.id)).map((r) => r.service))]
    start(
      'retry',
      services.map((service) => ({
        kind: 'retry',
        service,
        ids: rows.filter((r) => r.service === service && selected.has(r.id)).map((r) => r.id),
      })),
    )
    clear()
  }
  return (
    <>
      {canAct && (
        <div className="actions-bar">
          <button data-testid="action-retry" disabled={busy || selected.size === 0} onClick={retry}>
            Retry {selected.size}
          </button>
        </div>
      )}
      <table data-testid="parked">
        <thead>
          <tr>
            {canAct && <th />}
            <th>fact</th>
            <th>service</th>
            <th className="num">attempts</th>
            <th>last error</th>
            <th>parked</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="parked-row" data-message-id={r.id} data-service={r.service}>
              {canAct && (
                <td>
                  <input
                    type="checkbox"
                    data-testid="parked-select"
                    aria-label={`select ${r.id}`}
                    checked={selected.has(r.id)}
                    onChange={() => toggle(r.id)}
                  />
                </td>
              )}
              <td title={r.id}>{factName(r.type)}</td>
              <td>{r.service}</td>
              <td className="num">{r.attempts}</td>
              <td className="mono">{r.lastError ?? ''}</td>
              <td className="mono">{clock(r.failedAt, zone)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted">No parked rows for this order.</p>}
    </>
  )
}
