/**
 * `npm run contracts:check` (root): the compatibility gate. Compares every released event type
 * (compat/released/) with the working tree's zod schemas and the saga map, prints each verdict and
 * exits 0 when every change is compatible, 1 when one breaks a consumer, 2 when the corpus cannot
 * be read or a schema uses a construct the classifier does not judge.
 * `--released <dir>` judges against another corpus (tests use a fixture).
 */
import { parseArgs } from 'node:util'
import { allEvents, producers, sagaMap } from '../src/index.js'
import { RELEASED_DIR, readCorpus } from '../src/compat/corpus.js'
import { formatReport, runGate } from '../src/compat/gate.js'

const { values } = parseArgs({ options: { released: { type: 'string', default: RELEASED_DIR } } })
try {
  const report = runGate(readCorpus(values.released), { events: allEvents, reactions: sagaMap, producers })
  process.stdout.write(formatReport(report))
  process.exitCode = report.refusals.length > 0 ? 1 : 0
} catch (error) {
  process.stderr.write(`contracts:check: ${(error as Error).message}\n`)
  process.exitCode = 2
}
