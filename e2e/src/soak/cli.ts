// `npm run soak [-- options]`: a chaos soak of a fleet of its own (soak.ts); the options are in
// options.ts (`--help`). Exits 0 when every invariant held, 1 when one broke, 2 on bad options.
import fs from 'node:fs'
import { parseOptions } from '@saga/cli-kit'
import { soakOptions, soakProgram } from './options.js'
import { formatReport } from './report.js'
import { runSoak } from './soak.js'

// --help, --version and a usage error end the process here, with exit codes 0, 0 and 2.
const parsed = soakOptions(await parseOptions(soakProgram()))
const { reportFile, ...soak } = parsed
// Ctrl-C once: end the load and the faults now, then judge and tear down as usual; twice: exit at
// once (the service processes are killed; the run's databases e2e_<id>_* and queues stay).
const interrupt = new AbortController()
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130)
  console.log(
    '[soak] interrupted: ending the load and the faults, then judging (Ctrl-C again to exit at once)',
  )
  interrupt.abort()
})
const report = await runSoak({
  ...soak,
  signal: interrupt.signal,
  say: (line) => console.log(`[soak] ${line}`),
})
console.log(`\n${formatReport(report)}`)
if (reportFile) fs.writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`)
process.exit(report.ok ? 0 : 1)
