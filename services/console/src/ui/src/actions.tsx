import { useState } from 'react'
import { api, type ActionAnswer, type ActionRequest } from './api.js'
import { errorMessage, useConsole } from './context.js'
import { outcomeNote } from './messages.js'

/** One request of an action, before its dry-run flag is set. */
export type PlannedRequest = Omit<ActionRequest, 'dryRun'>

/** An action being prepared: its requests, and each request's answer (dry run, then for real). */
interface Flow {
  kind: ActionRequest['kind']
  requests: PlannedRequest[]
  dryRun: ActionAnswer[] | null
  done: ActionAnswer[] | null
}

/** What `useActionFlow` gives a page: start a dry run, and the panel that shows it. */
export interface ActionFlow {
  /** Runs `requests` as a dry run and shows what would happen, with a confirm button. */
  start: (kind: ActionRequest['kind'], requests: PlannedRequest[]) => void
  busy: boolean
  panel: React.ReactNode
}

const runAll = (requests: PlannedRequest[], dryRun: boolean) =>
  // One after the other: each is one admin request to a service.
  requests.reduce<Promise<ActionAnswer[]>>(
    (previous, request) =>
      previous.then(async (answers) => [...answers, await api.act({ ...request, dryRun })]),
    Promise.resolve([]),
  )

/**
 * The ids of the actions the services recorded: each answer's, and each cancelled order's (the
 * order service records one action per order), without repeats.
 */
const recordedIds = (answers: ActionAnswer[]): string[] =>
  [
    ...new Set(
      answers.flatMap((a) => [a.actionId, ...a.results.map((r) => ('actionId' in r ? r.actionId : null))]),
    ),
  ].filter((id): id is string => id !== null)

function Outcomes({ answers, testId }: { answers: ActionAnswer[]; testId: string }) {
  const rows = answers.flatMap((a) => a.results)
  return (
    <table data-testid={testId}>
      <tbody>
        {rows.map((r, i) => {
          const id = 'messageId' in r && r.messageId !== undefined ? r.messageId : (r.id ?? '')
          return (
            <tr key={`${id}-${i}`} data-testid="outcome-row" data-id={id} data-outcome={r.outcome}>
              <td className="mono">{id}</td>
              <td>{r.outcome}</td>
              <td className="muted" data-testid="outcome-note">
                {'message' in r ? outcomeNote(r.message, r.details) : ''}
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

/**
 * Actions in two steps: a dry run first (the services answer what would happen, nothing changes),
 * then a confirm that runs the same requests for real. `onDone` runs after the real one (to reload).
 */
export function useActionFlow(onDone: () => void): ActionFlow {
  const { reportError } = useConsole()
  const [flow, setFlow] = useState<Flow | null>(null)
  const [busy, setBusy] = useState(false)

  const run = (next: Flow, dryRun: boolean) => {
    setBusy(true)
    runAll(next.requests, dryRun)
      .then((answers) => {
        setFlow(dryRun ? { ...next, dryRun: answers, done: null } : { ...next, done: answers })
        if (!dryRun) onDone()
      })
      .catch((error: unknown) => reportError(`${next.kind} failed: ${errorMessage(error)}`))
      .finally(() => setBusy(false))
  }

  const panel = flow && (
    <div className="dry-run" data-testid="action-panel" data-kind={flow.kind}>
      {flow.dryRun && flow.done === null && (
        <>
          <strong>Dry run of {flow.kind}: nothing has changed yet. This would happen:</strong>
          <Outcomes answers={flow.dryRun} testId="dry-run-result" />
          <div className="actions-bar">
            <button
              className="danger"
              data-testid="action-confirm"
              disabled={busy}
              onClick={() => run(flow, false)}
            >
              Confirm {flow.kind}
            </button>
            <button data-testid="action-abort" disabled={busy} onClick={() => setFlow(null)}>
              Abort
            </button>
          </div>
        </>
      )}
      {flow.done && (
        <>
          <strong>
            Done: {flow.kind}
            {recordedIds(flow.done).length > 0 &&
              ` (recorded as action ${recordedIds(flow.done).join(', ')})`}
          </strong>
          <Outcomes answers={flow.done} testId="action-result" />
          <button data-testid="action-close" onClick={() => setFlow(null)}>
            Close
          </button>
        </>
      )}
    </div>
  )

  return {
    busy,
    panel,
    start: (kind, requests) => {
      if (requests.length === 0) return
      run({ kind, requests, dryRun: null, done: null }, true)
    },
  }
}
