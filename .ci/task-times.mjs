// Prints where a test run's time went, one line per workspace: from turbo's run summaries
// (`.turbo/runs/*.json`, written when TURBO_RUN_SUMMARY=true) newer than a given time, the test
// tasks that ran (cache hits and builds left out), or from lines `<workspace> <seconds>` on stdin.
//
//   node .ci/task-times.mjs <label> <since epoch ms>   e.g. `ci: time  Node 24  @saga/e2e#test  312 s`
//   printf '@saga/x 12\n' | node .ci/task-times.mjs <label> -
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const [label = '', since = '0'] = process.argv.slice(2)

/** `[task, seconds]` of every test task of the summaries written after `sinceMs`. */
function fromSummaries(sinceMs) {
  const dir = join(process.cwd(), '.turbo', 'runs')
  let files = []
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'))
  } catch {
    return []
  }
  return files
    .filter((f) => statSync(join(dir, f)).mtimeMs >= sinceMs)
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')).tasks ?? [])
    .filter((t) => t.task !== 'build' && t.task !== 'generate' && t.execution && t.cache?.status !== 'HIT')
    .map((t) => [t.taskId, (t.execution.endTime - t.execution.startTime) / 1000])
}

const fromStdin = () =>
  readFileSync(0, 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((words) => words.length === 2)
    .map(([task, seconds]) => [task, Number(seconds)])

const rows = since === '-' ? fromStdin() : fromSummaries(Number(since))
const width = Math.max(0, ...rows.map(([task]) => task.length))
for (const [task, seconds] of rows.sort((a, b) => b[1] - a[1]))
  console.log(`ci: time  ${label}  ${task.padEnd(width)}  ${seconds.toFixed(0).padStart(4)} s`)
