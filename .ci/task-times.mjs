// Where a CI run's time went, one line per workspace and Node line, longest first.
//
//   node .ci/task-times.mjs collect <line> <since epoch ms>   prints `<line>\t<workspace>\t<seconds>`
//       for each test task in turbo's run summaries (`.turbo/runs/*.json`, written when
//       TURBO_RUN_SUMMARY=true) newer than <since>: the tasks that ran, builds and cache hits left out
//   node .ci/task-times.mjs print < rows                      adds up the rows of each workspace and
//       line and prints them as `ci: time  Node 24  @saga/e2e  312 s`, longest first
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const [command, line, since] = process.argv.slice(2)

function collect(sinceMs) {
  const dir = join(process.cwd(), '.turbo', 'runs')
  let files = []
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'))
  } catch {
    return
  }
  const tasks = files
    .filter((f) => statSync(join(dir, f)).mtimeMs >= sinceMs)
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')).tasks ?? [])
    .filter((t) => t.task.startsWith('test') && t.execution && t.cache?.status !== 'HIT')
  for (const t of tasks)
    console.log(`${line}\t${t.package}\t${((t.execution.endTime - t.execution.startTime) / 1000).toFixed(1)}`)
}

function print() {
  const seconds = new Map()
  for (const row of readFileSync(0, 'utf8').split('\n')) {
    const [nodeLine, workspace, s] = row.split('\t')
    if (!workspace) continue
    const key = `Node ${nodeLine}  ${workspace}`
    seconds.set(key, (seconds.get(key) ?? 0) + Number(s))
  }
  const width = Math.max(0, ...[...seconds.keys()].map((k) => k.length))
  for (const [key, s] of [...seconds].sort((a, b) => b[1] - a[1]))
    console.log(`ci: time  ${key.padEnd(width)}  ${s.toFixed(0).padStart(4)} s`)
}

if (command === 'collect') collect(Number(since))
else if (command === 'print') print()
else {
  console.error('usage: task-times.mjs collect <line> <since epoch ms> | print < rows')
  process.exit(2)
}
