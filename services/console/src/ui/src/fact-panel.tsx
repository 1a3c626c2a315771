import type { FactNode } from './api.js'
import { useConsole } from './context.js'
import { cloudEventAttributes, payloadText, traceLink } from './fact-detail.js'
import { dateTime, factName } from './format.js'

/** Props of `FactPanel`. */
export interface FactPanelProps {
  fact: FactNode
  /** TRACE_URL_TEMPLATE, null when unset. */
  traceUrlTemplate: string | null
  onClose: () => void
}

/** A name/value table of the panel (`testId` on the table, `rowTestId` with `data-name` on each row). */
function Pairs({
  pairs,
  testId,
  rowTestId,
}: {
  pairs: [string, string][]
  testId: string
  rowTestId: string
}) {
  return (
    <table data-testid={testId}>
      <tbody>
        {pairs.map(([name, value]) => (
          <tr key={name} data-testid={rowTestId} data-name={name}>
            <th className="mono">{name}</th>
            <td className="mono">{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/**
 * One fact as it travelled, opened by a click on its node: its CloudEvents attributes, the
 * headers its producer's outbox row stored, its payload as JSON and, where TRACE_URL_TEMPLATE is set
 * and the producer exposes the trace id, a link to its trace.
 */
export function FactPanel({ fact, traceUrlTemplate, onClose }: FactPanelProps) {
  const { zone } = useConsole()
  const trace = traceLink(traceUrlTemplate, fact.traceId)
  const attributes = cloudEventAttributes(fact)
  const headers = Object.entries(fact.headers ?? {})
  return (
    <section className="card fact-panel" data-testid="fact-detail" data-message-id={fact.id}>
      <div className="actions-bar">
        <h2>
          {factName(fact.type)} <span className="mono muted">{fact.id}</span>
        </h2>
        <span className="spacer" />
        {trace !== null && (
          <a data-testid="fact-trace" href={trace} target="_blank" rel="noreferrer">
            trace {fact.traceId}
          </a>
        )}
        <button data-testid="fact-close" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="muted">
        {fact.producer ?? 'unknown producer'} · {fact.state} · committed {dateTime(fact.occurredAt, zone)}
      </p>
      <div className="grid">
        <div>
          <h3>CloudEvents attributes</h3>
          {attributes.length > 0 ? (
            <Pairs pairs={attributes} testId="fact-attributes" rowTestId="fact-attribute" />
          ) : (
            <p className="muted">Its producer&apos;s outbox row was not read.</p>
          )}
          <h3>Stored headers</h3>
          {headers.length > 0 ? (
            <Pairs pairs={headers} testId="fact-headers" rowTestId="fact-header" />
          ) : (
            <p className="muted">None read.</p>
          )}
        </div>
        <div>
          <h3>Payload (data)</h3>
          <pre className="payload" data-testid="fact-payload">
            {payloadText(fact.payload)}
          </pre>
        </div>
      </div>
    </section>
  )
}
