import { useConsole } from './context.js'
import type { FactNode, SourceStates } from './api.js'
import { clock, duration, factName, shortId, sinceCommit } from './format.js'

/**
 * One fact's row: committed → published → consumed by each handler, attempts, state and errors. A
 * handler of a service whose inbox could not be read (`sources`) is "unknown", not "not consumed".
 */
function HopRow({ f, trace, sources }: { f: FactNode; trace: string | null; sources: SourceStates }) {
  const { zone } = useConsole()
  return (
    <tr data-testid="hop-row" data-message-id={f.id} data-branch={f.branch} data-late={f.late}>
      <td className={`branch-${f.branch}`} title={f.id}>
        {factName(f.type)} <span className="mono muted">{shortId(f.id)}</span>
        {f.late && <strong title="occurred after the order had ended"> late</strong>}
        {trace && (
          <>
            {' '}
            <a href={trace} target="_blank" rel="noreferrer">
              trace
            </a>
          </>
        )}
      </td>
      <td>{f.producer ?? '?'}</td>
      <td className="mono" data-testid="hop-committed">
        {clock(f.occurredAt, zone)}
      </td>
      <td className="num">{duration(sinceCommit(f.occurredAt, f.publishedAt))}</td>
      <td>
        {f.consumers.map((c) => (
          <div
            key={`${c.service}/${c.handler}`}
            data-testid="hop-consumer"
            data-handler={c.handler}
            data-consumed={c.receivedAt !== null}
          >
            {c.service}/{c.handler}:{' '}
            {c.receivedAt === null ? (
              <span className="muted">
                {sources[c.service].ok ? 'not consumed' : `unknown: ${c.service} could not be read`}
              </span>
            ) : (
              `+${duration(sinceCommit(f.occurredAt, c.receivedAt))}`
            )}
          </div>
        ))}
      </td>
      <td className="num">{f.attempts}</td>
      <td>
        {f.state}
        {f.lastError && <div className="mono muted">{f.lastError}</div>}
        {f.deadLetters.map((d) => (
          <div key={d.queue} className="health-down">
            dead-lettered in {d.queue}: {d.reason}
          </div>
        ))}
        {f.note && <div className="muted">{f.note}</div>}
      </td>
    </tr>
  )
}

/** Each fact's hops: committed (occurred) → published → consumed by each handler, with retries and errors. */
export function HopsTable({
  facts,
  traceUrl,
  sources,
}: {
  facts: FactNode[]
  traceUrl: (id: string) => string | null
  sources: SourceStates
}) {
  return (
    <table data-testid="hops">
      <thead>
        <tr>
          <th>fact</th>
          <th>producer</th>
          <th>committed</th>
          <th className="num">→ published, from commit</th>
          <th>consumers (→ consumed, from commit)</th>
          <th className="num">attempts</th>
          <th>state / error</th>
        </tr>
      </thead>
      <tbody>
        {facts.map((f) => (
          <HopRow key={f.id} f={f} trace={traceUrl(f.id)} sources={sources} />
        ))}
      </tbody>
    </table>
  )
}
