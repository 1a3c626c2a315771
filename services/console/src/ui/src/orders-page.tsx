import { ORDER_STATUSES, WAITING_FOR } from '@saga/contracts/order-states'
import { useCallback, useEffect, useState, type FormEvent } from 'react'
import { useActionFlow } from './actions.js'
import { api, type OrderPage, type SearchAnswer } from './api.js'
import { canAct, errorMessage, useConsole } from './context.js'
import { OrdersTable } from './orders-table.js'
import { shortId } from './format.js'
import { Link, navigate, useLocation } from './router.js'

/** The filters of `GET /api/orders`, as they appear in the page's URL. */
const FILTERS = [
  'status',
  'waitingFor',
  'cancellationReason',
  'placedAfter',
  'placedBefore',
  'deadlineBefore',
  'customerId',
  'idPrefix',
  'limit',
] as const

/** A `datetime-local` value as ISO (UTC), or '' when empty. */
const toIso = (local: string): string => (local === '' ? '' : new Date(local).toISOString())
/** An ISO time as a `datetime-local` value. */
const toLocal = (iso: string | null): string => {
  if (!iso) return ''
  const d = new Date(iso)
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

function Filters({ search }: { search: URLSearchParams }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const query = new URLSearchParams()
    for (const name of FILTERS) {
      const entry = form.get(name)
      const raw = typeof entry === 'string' ? entry : ''
      const value = name.startsWith('placed') || name === 'deadlineBefore' ? toIso(raw) : raw
      if (value !== '') query.set(name, value)
    }
    navigate(`/orders${query.size > 0 ? `?${query.toString()}` : ''}`)
  }
  const select = (name: string, options: readonly string[]) => (
    <select name={name} defaultValue={search.get(name) ?? ''} data-testid={`filter-${name}`}>
      <option value="">any</option>
      {options.map((o) => (
        <option key={o}>{o}</option>
      ))}
    </select>
  )
  const time = (name: string) => (
    <input
      type="datetime-local"
      name={name}
      defaultValue={toLocal(search.get(name))}
      data-testid={`filter-${name}`}
    />
  )
  const text = (name: string, size: number) => (
    <input name={name} size={size} defaultValue={search.get(name) ?? ''} data-testid={`filter-${name}`} />
  )
  return (
    <form className="filters" data-testid="orders-filters" onSubmit={submit} key={search.toString()}>
      <label>status {select('status', ORDER_STATUSES)}</label>
      <label>waiting for {select('waitingFor', WAITING_FOR)}</label>
      <label>
        cancellation reason
        <input
          name="cancellationReason"
          defaultValue={search.get('cancellationReason') ?? ''}
          data-testid="filter-cancellationReason"
        />
      </label>
      <label>placed after {time('placedAfter')}</label>
      <label>placed before {time('placedBefore')}</label>
      <label>deadline before {time('deadlineBefore')}</label>
      <label>customer id {text('customerId', 36)}</label>
      <label>order id starts {text('idPrefix', 12)}</label>
      <label>per page {select('limit', ['20', '50', '100'])}</label>
      <button type="submit" className="primary" data-testid="filters-apply">
        Apply
      </button>
    </form>
  )
}

/**
 * One box for any id someone holds (an order id or its start, a customer id, a message id from a
 * log line, a trace id, an Idempotency-Key): the console asks the services what it is, then lands on
 * the order or on the list filtered by customer or id prefix; otherwise it says what it found.
 */
function Search() {
  const [answer, setAnswer] = useState<SearchAnswer | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const entry = new FormData(event.currentTarget).get('q')
    const text = typeof entry === 'string' ? entry.trim() : ''
    if (text === '') return
    setBusy(true)
    setError(null)
    api
      .search(text)
      .then((found) => {
        setAnswer(found)
        if (found.to !== null) navigate(found.to)
      })
      .catch((reason: unknown) => setError(errorMessage(reason)))
      .finally(() => setBusy(false))
  }
  return (
    <form className="filters" data-testid="search" onSubmit={submit}>
      <label>
        search by any id: order (or its start), customer, message, trace, idempotency key
        <input name="q" size={44} data-testid="search-input" autoComplete="off" />
      </label>
      <button type="submit" data-testid="search-submit" disabled={busy}>
        Find
      </button>
      {error !== null && (
        <span className="stale-note" data-testid="search-error">
          {error}
        </span>
      )}
      {answer !== null && answer.to === null && <SearchMatches answer={answer} />}
    </form>
  )
}

/** What a search found when it did not land: nothing, or orders of several kinds, each a link. */
function SearchMatches({ answer }: { answer: SearchAnswer }) {
  const unanswered = answer.unanswered.map((u) => u.service).join(', ')
  return (
    <span data-testid="search-result">
      {answer.matches.length === 0
        ? `No order has the id ${answer.query}`
        : answer.matches.map((m) => (
            <Link key={`${m.kind}:${m.orderId}`} to={`/orders/${m.orderId}`} className="mono">
              {`${m.kind} ${shortId(m.orderId)} `}
            </Link>
          ))}
      {unanswered !== '' && ` (not answered: ${unanswered})`}
    </span>
  )
}

/** `/orders`: orders with the contract's filters, keyset paging, and cancel for selected PENDING orders. */
export function OrdersPage() {
  const { search } = useLocation()
  const { session, reportError } = useConsole()
  const [page, setPage] = useState<OrderPage | null>(null)
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const query = search.toString()
  const load = useCallback(() => {
    api
      .orders(new URLSearchParams(query))
      .then(setPage)
      .catch((error: unknown) => reportError(`Orders: ${errorMessage(error)}`))
  }, [query, reportError])
  useEffect(load, [load])
  const flow = useActionFlow(load)
  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })
  const withCursor = (cursor: string | null) => {
    const next = new URLSearchParams(query)
    if (cursor === null) next.delete('cursor')
    else next.set('cursor', cursor)
    navigate(`/orders?${next.toString()}`)
  }
  return (
    <>
      <h1>Orders</h1>
      <section className="card">
        <Search />
        <Filters search={search} />
      </section>
      {canAct(session) && (
        <div className="actions-bar">
          <button
            data-testid="action-cancel"
            className="danger"
            disabled={selected.size === 0 || flow.busy}
            onClick={() => flow.start('cancel', [{ kind: 'cancel', service: 'order', ids: [...selected] }])}
          >
            Cancel {selected.size} selected
          </button>
        </div>
      )}
      {flow.panel}
      <section className="card">
        <OrdersTable
          orders={page?.items ?? []}
          testId="orders-list"
          selected={selected}
          onToggle={canAct(session) ? toggle : undefined}
        />
        <div className="actions-bar">
          <button
            data-testid="orders-first"
            disabled={!search.has('cursor')}
            onClick={() => withCursor(null)}
          >
            First page
          </button>
          <button
            data-testid="orders-next"
            disabled={!page?.nextCursor}
            onClick={() => withCursor(page?.nextCursor ?? null)}
          >
            Next page
          </button>
        </div>
      </section>
    </>
  )
}
