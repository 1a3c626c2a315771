// A supervisor in miniature for supervisor.int.test.ts: runs cluster-server.ts as npm start's
// supervisor runs a service (stdout and stderr piped to it, SAGA_SUPERVISOR_PID its pid), prints the
// child's pid, and keeps reading its output until it is killed.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const server = fileURLToPath(new URL('./cluster-server.ts', import.meta.url))
const child = spawn(process.execPath, ['--import', 'tsx', server], {
  env: { ...process.env, SAGA_SUPERVISOR_PID: String(process.pid) },
  stdio: ['ignore', 'pipe', 'pipe'],
})
child.stdout.resume()
child.stderr.resume()
process.stdout.write(`${child.pid}\n`)
