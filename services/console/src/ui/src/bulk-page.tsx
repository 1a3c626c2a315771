import { WAITING_FOR } from '@saga/contracts/order-states'
import { useEffect, useState } from 'react'
import { api, type BulkPreview, type BulkProgress, type BulkRequest, type FleetSnapshot } from './api.js'
import { canAct, errorMessage, useConsole } from './context.js'
import { inputToIso, type Zone } from './format.js'
import { OrderedKeys } from './ordered-keys.js'

/** How often a running bulk action's progress is read, ms. */
const PROGRESS_EVERY_MS = 500

/** The form's fields, as typed (empty: not part of the filter). */
interface Form {
  kind: BulkRequest['kind']
  service: string
  handler: string
  type: string
  reason: string
  since: string
  until: string
  waitingFor: string
  placedBefore: string
  limit: string
  ratePerSecond: string
}

const EMPTY: Form = {
  kind: 'requeue',
  service: '',
  handler: '',
  type: '',
  reason: '',
  since: '',
  until: '',
  waitingFor: '',
  placedBefore: '',
  limit: '1000',
  ratePerSecond: '50',
}

/** The dead-letter and parked-row filter's fields: the form's key (testid `bulk-<key>`), label, input type. */
const LETTER_FIELDS: ReadonlyArray<readonly ['type' | 'reason' | 'since' | 'until', string, string]> = [
  ['type', 'type', 'text'],
  ['reason', 'reason contains', 'text'],
  ['since', 'since', 'datetime-local'],
  ['until', 'until', 'datetime-local'],
]

/** How much and how fast: the form's key and label. */
const LIMIT_FIELDS: ReadonlyArray<readonly ['limit' | 'ratePerSecond', string]> = [
  ['limit', 'at most'],
  ['ratePerSecond', 'per second'],
]

const VERB: Record<BulkRequest['kind'], string> = {
  requeue: 'Requeue',
  discard: 'Discard',
  retry: 'Retry',
  cancel: 'Cancel',
}

/** A `datetime-local` value read in the page's `zone` as ISO 8601, or undefined when empty. */
const instant = (value: string, zone: Zone): string | undefined => inputToIso(value, zone) || undefined
const given = (value: string): string | undefined => (value.trim() === '' ? undefined : value.trim())

/** The request the form describes; `services` are the fleet's, times read in the page's `zone`. */
function requestOf(
  form: Form,
  services: readonly FleetSnapshot['services'][number]['service'][],
  zone: Zone,
): BulkRequest {
  const common = { dryRun: true, limit: Number(form.limit), ratePerSecond: Number(form.ratePerSecond) }
  if (form.kind === 'cancel') {
    const waitingFor = WAITING_FOR.find((step) => step === form.waitingFor)
    return {
      ...common,
      kind: 'cancel',
      filter: { waitingFor, placedBefore: instant(form.placedBefore, zone) },
    }
  }
  const chosen = services.filter((service) => service === form.service)
  return {
    ...common,
    kind: form.kind,
    services: chosen.length > 0 ? chosen : undefined,
    filter: {
      handler: form.kind === 'retry' ? undefined : given(form.handler),
      type: given(form.type),
      reason: given(form.reason),
      since: instant(form.since, zone),
      until: instant(form.until, zone),
    },
  }
}

/** One labelled input of the form. */
function Field(props: {
  label: string
  testId: string
  value: string
  type?: string
  list?: string
  set: (value: string) => void
}) {
  return (
    <label>
      {props.label}{' '}
      <input
        data-testid={props.testId}
        type={props.type ?? 'text'}
        list={props.list}
        value={props.value}
        onChange={(e) => props.set(e.target.value)}
      />
    </label>
  )
}

/** The filter's fields for the kind chosen; the services and their handlers are the fleet's. */
function Filter(props: { form: Form; set: (patch: Partial<Form>) => void; fleet: FleetSnapshot | null }) {
  const { form, set, fleet } = props
  const services = fleet?.services ?? []
  if (form.kind === 'cancel')
    return (
      <>
        <label>
          waiting for{' '}
          <select
            data-testid="bulk-waiting-for"
            value={form.waitingFor}
            onChange={(e) => set({ waitingFor: e.target.value })}
          >
            <option value="">any step</option>
            {WAITING_FOR.map((step) => (
              <option key={step}>{step}</option>
            ))}
          </select>
        </label>
        <Field
          label="placed before"
          testId="bulk-placed-before"
          type="datetime-local"
          value={form.placedBefore}
          set={(v) => set({ placedBefore: v })}
        />
      </>
    )
  return (
    <>
      <label>
        service{' '}
        <select
          data-testid="bulk-service"
          value={form.service}
          onChange={(e) => set({ service: e.target.value })}
        >
          <option value="">every service</option>
          {services.map(({ service }) => (
            <option key={service}>{service}</option>
          ))}
        </select>
      </label>
      {form.kind !== 'retry' && (
        <Field
          label="handler"
          testId="bulk-handler"
          value={form.handler}
          set={(v) => set({ handler: v })}
          list="bulk-handlers"
        />
      )}
      <datalist id="bulk-handlers">
        {services
          .filter(({ service }) => form.service === '' || service === form.service)
          .flatMap(({ queues }) => queues.items.map((q) => q.handler))
          .map((handler) => (
            <option key={handler} value={handler} />
          ))}
      </datalist>
      {LETTER_FIELDS.map(([key, label, type]) => (
        <Field
          key={key}
          label={label}
          testId={`bulk-${key}`}
          type={type}
          value={form[key]}
          set={(v) => set({ [key]: v })}
        />
      ))}
    </>
  )
}

/** What the dry run found, per service, and the button that runs it for real. */
function Preview(props: { preview: BulkPreview; disabled: boolean; run: () => void }) {
  const { preview } = props
  return (
    <section className="card dry-run" data-testid="bulk-preview" data-matched={preview.matched}>
      <strong>
        Dry run: nothing has changed. {VERB[preview.kind]} would take{' '}
        <span data-testid="bulk-matched">{preview.matched}</span>
      </strong>
      <table>
        <tbody>
          {preview.services.map((s) => (
            <tr
              key={s.service}
              data-testid="bulk-preview-service"
              data-service={s.service}
              data-matched={s.matched ?? ''}
            >
              <td>{s.service}</td>
              <td className="num">{s.matched ?? '?'}</td>
              <td className="muted">
                {s.error ?? (s.complete ? '' : 'counted the first 10,000 dead letters')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="actions-bar">
        <button
          className="danger"
          data-testid="bulk-run"
          disabled={props.disabled || preview.matched === 0}
          onClick={props.run}
        >
          {VERB[preview.kind]} {preview.matched}
        </button>
      </div>
    </section>
  )
}

/** A running or ended bulk action: its progress, the stop button, and what was recorded. */
function Progress(props: { progress: BulkProgress; canStop: boolean; stop: () => void }) {
  const { progress } = props
  const running = progress.state === 'running'
  return (
    <section
      className="card"
      data-testid="bulk-progress"
      data-state={progress.state}
      data-done={progress.done}
      data-matched={progress.matched}
    >
      <strong>
        {VERB[progress.kind]}: <span data-testid="bulk-done">{progress.done}</span> of {progress.matched} (
        {progress.state}
        {progress.failed > 0 ? `, ${progress.failed} not done` : ''})
      </strong>{' '}
      <progress max={Math.max(1, progress.matched)} value={progress.done} />
      {running && props.canStop && (
        <button data-testid="bulk-stop" onClick={props.stop}>
          Stop
        </button>
      )}
      {progress.actionIds.length > 0 && (
        <p data-testid="bulk-recorded">Recorded as action {progress.actionIds.join(', ')}</p>
      )}
      {progress.services
        .filter((s) => s.error !== null || s.job?.error)
        .map((s) => (
          <p key={s.service} className="warning">
            {s.service}: {s.error ?? s.job?.error}
          </p>
        ))}
    </section>
  )
}

/** The bulk form: the action, its filter, how much and how fast, and the dry run's button. */
function BulkForm(props: {
  form: Form
  set: (patch: Partial<Form>) => void
  fleet: FleetSnapshot | null
  disabled: boolean
  dryRun: () => void
}) {
  const { form, set } = props
  return (
    <section className="card filters" data-testid="bulk-form">
      <label>
        action{' '}
        <select
          data-testid="bulk-kind"
          value={form.kind}
          onChange={(e) => set({ kind: e.target.value as Form['kind'] })}
        >
          <option value="requeue">requeue dead letters</option>
          <option value="discard">discard dead letters</option>
          <option value="retry">retry parked rows</option>
          <option value="cancel">cancel PENDING orders</option>
        </select>
      </label>
      <Filter form={form} set={set} fleet={props.fleet} />
      {LIMIT_FIELDS.map(([key, label]) => (
        <Field
          key={key}
          label={label}
          testId={key === 'limit' ? 'bulk-limit' : 'bulk-rate'}
          type="number"
          value={form[key]}
          set={(v) => set({ [key]: v })}
        />
      ))}
      <button data-testid="bulk-dry-run" disabled={props.disabled} onClick={props.dryRun}>
        Dry run
      </button>
    </section>
  )
}

/** Reads `progress` again every `PROGRESS_EVERY_MS` while it runs. */
function useProgress(progress: BulkProgress | null, setProgress: (next: BulkProgress) => void) {
  const { reportError } = useConsole()
  useEffect(() => {
    if (progress?.state !== 'running') return
    const timer = setTimeout(() => {
      api
        .bulkProgress(progress.id)
        .then(setProgress)
        .catch((error: unknown) => reportError(`progress: ${errorMessage(error)}`))
    }, PROGRESS_EVERY_MS)
    return () => clearTimeout(timer)
  }, [progress, setProgress, reportError])
}

/**
 * Bulk repair: dead letters (requeue, discard) and parked rows (retry) across orders, filtered by
 * service, handler, type, reason and time, or PENDING orders (cancel) by the step they wait for and
 * when they were placed. A dry run first shows how many each service would take; the run goes at the
 * rate chosen, shows its progress and can be stopped; each service records it as one action.
 * Viewers see the form, never an enabled action.
 */
export function BulkPage() {
  const { session, reportError, zone } = useConsole()
  const [form, setForm] = useState<Form>(EMPTY)
  const [preview, setPreview] = useState<BulkPreview | null>(null)
  const [progress, setProgress] = useState<BulkProgress | null>(null)
  const [busy, setBusy] = useState(false)
  const [fleet, setFleet] = useState<FleetSnapshot | null>(null)
  useEffect(() => {
    api
      .fleet()
      .then(setFleet)
      .catch((error: unknown) => reportError(`fleet: ${errorMessage(error)}`))
  }, [reportError])
  const names = (fleet?.services ?? []).map((s) => s.service)
  useProgress(progress, setProgress)
  const operator = canAct(session)
  const set = (patch: Partial<Form>) => {
    setForm((old) => ({ ...old, ...patch }))
    setPreview(null)
  }
  const call = <T,>(work: () => Promise<T>, then: (value: T) => void) => {
    setBusy(true)
    work()
      .then(then)
      .catch((error: unknown) => reportError(errorMessage(error)))
      .finally(() => setBusy(false))
  }
  const running = progress?.state === 'running'
  return (
    <>
      <h1>Bulk repair</h1>
      {!operator && (
        <p className="muted" data-testid="bulk-viewer-note">
          Viewers read; only an operator signed in with the operator token runs a bulk action.
        </p>
      )}
      <BulkForm
        form={form}
        set={set}
        fleet={fleet}
        disabled={!operator || busy || running}
        dryRun={() => call(() => api.bulkPreview(requestOf(form, names, zone)), setPreview)}
      />
      {preview && (
        <Preview
          preview={preview}
          disabled={!operator || busy || running}
          run={() =>
            call(
              () => api.bulkStart(requestOf(form, names, zone)),
              (started) => {
                setPreview(null)
                setProgress(started)
              },
            )
          }
        />
      )}
      {progress && (
        <Progress
          progress={progress}
          canStop={operator}
          stop={() => call(() => api.bulkStop(progress.id), setProgress)}
        />
      )}
      <OrderedKeys />
    </>
  )
}
