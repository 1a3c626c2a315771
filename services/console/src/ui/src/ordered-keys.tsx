import { useCallback, useEffect, useState } from 'react'
import { api, type OrderedKey, type OrderedKeysPage, type SkipAnswer } from './api.js'
import { canAct, errorMessage, useConsole } from './context.js'
import { dateTime } from './format.js'

/** A key's identity, for React and for the test ids. */
const idOf = (k: OrderedKey): string => `${k.service}\u0000${k.handler}\u0000${k.producer}\u0000${k.key}`

/** What holds the key back, in words: the dead-lettered message, or the missing predecessor. */
function why(k: OrderedKey): string {
  if (k.state === 'blocked')
    return `message ${k.blockedSeq ?? '?'} (${k.blockedBy ?? '?'}) dead-lettered: ${k.reason ?? ''}`
  return `message ${String(BigInt(k.lastSeq) + 1n)} has not come; ${k.firstWaiting ?? '?'} is held`
}

/** One stuck key; an operator's row has a skip button (the dry run). */
function KeyRow(props: { k: OrderedKey; operator: boolean; busy: boolean; dryRun: () => void }) {
  const { k, operator, busy, dryRun } = props
  const { zone } = useConsole()
  return (
    <tr data-testid="ordered-key-row" data-service={k.service} data-key={k.key} data-state={k.state}>
      <td className="mono">
        {k.service} / {k.handler}
      </td>
      <td className="mono" title={`producer ${k.producer}`}>
        {k.key}
      </td>
      <td>{k.state}</td>
      <td className="mono">{dateTime(k.blockedSince ?? k.waitingSince, zone)}</td>
      <td>{why(k)}</td>
      <td className="num" data-testid="ordered-key-waiting">
        {k.waiting}
      </td>
      {operator && (
        <td>
          <button data-testid="ordered-key-skip" disabled={busy} onClick={dryRun}>
            Skip…
          </button>
        </td>
      )}
    </tr>
  )
}

/** The dry run's answer for one key, with the confirmation that skips it for real. */
function SkipPreview(props: {
  k: OrderedKey
  answer: SkipAnswer
  busy: boolean
  confirm: () => void
  cancel: () => void
}) {
  const { k, answer, busy } = props
  const result = answer.results[0]
  const would = result?.outcome === 'would-skip'
  return (
    <section className="card dry-run" data-testid="ordered-key-preview" data-outcome={result?.outcome ?? ''}>
      <strong>
        Dry run: nothing has changed.{' '}
        {would
          ? `Skipping moves ${k.key} of ${k.service} / ${k.handler} from ${result?.from ?? '?'} to ${result?.to ?? '?'}; the ${k.waiting} held behind it are then handled in order.`
          : `Nothing to skip: ${result?.outcome ?? 'no answer'}.`}
      </strong>
      <div className="actions-bar">
        <button
          className="danger"
          data-testid="ordered-key-confirm"
          disabled={busy || !would}
          onClick={props.confirm}
        >
          Skip it
        </button>
        <button data-testid="ordered-key-cancel" disabled={busy} onClick={props.cancel}>
          Cancel
        </button>
      </div>
    </section>
  )
}

/**
 * Ordered keys that do not move, from every service (`GET /api/ordered-keys`): which key, since
 * when, by which message, how many wait behind it; an operator skips one (dry run, then confirm).
 * A service that could not be read is named.
 */
export function OrderedKeys() {
  const { session, reportError } = useConsole()
  const [page, setPage] = useState<OrderedKeysPage | null>(null)
  const [preview, setPreview] = useState<{ k: OrderedKey; answer: SkipAnswer } | null>(null)
  const [busy, setBusy] = useState(false)
  const operator = canAct(session)
  const load = useCallback(() => {
    api
      .orderedKeys()
      .then(setPage)
      .catch((error: unknown) => reportError(`ordered keys: ${errorMessage(error)}`))
  }, [reportError])
  useEffect(load, [load])
  const skip = (k: OrderedKey, dryRun: boolean) => {
    setBusy(true)
    const { service, handler, producer, key } = k
    api
      .skipOrdered({ service, handler, producer, key, dryRun })
      .then((answer) => {
        setPreview(dryRun ? { k, answer } : null)
        if (!dryRun) load()
      })
      .catch((error: unknown) => reportError(errorMessage(error)))
      .finally(() => setBusy(false))
  }
  const unread = Object.entries(page?.sources ?? {}).filter(([, s]) => !s.ok)
  return (
    <section data-testid="ordered-keys">
      <h2>Ordered keys held back</h2>
      {unread.map(([service, s]) => (
        <p key={service} className="muted" data-testid="ordered-keys-unread">
          {service}: could not be read ({s.reason})
        </p>
      ))}
      {preview && (
        <SkipPreview
          k={preview.k}
          answer={preview.answer}
          busy={busy}
          confirm={() => skip(preview.k, false)}
          cancel={() => setPreview(null)}
        />
      )}
      {page && page.keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>service / handler</th>
              <th>key</th>
              <th>state</th>
              <th>since</th>
              <th>held back by</th>
              <th className="num">waiting</th>
              {operator && <th />}
            </tr>
          </thead>
          <tbody>
            {page.keys.map((k) => (
              <KeyRow key={idOf(k)} k={k} operator={operator} busy={busy} dryRun={() => skip(k, true)} />
            ))}
          </tbody>
        </table>
      )}
      {page?.keys.length === 0 && <p className="muted">No ordered key is blocked or waits on a gap.</p>}
    </section>
  )
}
