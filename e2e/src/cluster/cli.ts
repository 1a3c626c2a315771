// `npm run test:cluster [-- options]`: the fleet on three RabbitMQ nodes (docker-compose.cluster.yml)
// through a leader kill, node stops and a partition under load (cluster.ts). Needs Docker and free
// ports 3001-3005, 15432-15435, 5673-5675, 15672. Exits 0 when every fault passed, 1 when one
// failed or the run broke, 2 on bad options.
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { runCluster } from './cluster.js'

const HELP = `Usage: npm run test:cluster -- [options]

  --rate N           orders a second of the steady load (default 5)
  --cancel-share X   share of orders the customer cancels, 0-1 (default 0.1)
  --orders-around N  orders placed before each fault and again after its recovery (default 50)
  --settle S         seconds the fleet may take to settle after each fault (default 180)
  --report FILE      also write the report as JSON
  --keep             leave the cluster running (default: docker compose ... down -v)
  --help             this text
`

function number(name: string, value: string | undefined, fallback: number, max = Infinity): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0 || n > max) {
    process.stderr.write(`--${name}: '${value}' is not a number in (0, ${max}]\n${HELP}`)
    process.exit(2)
  }
  return n
}

let parsed
try {
  parsed = parseArgs({
    options: {
      rate: { type: 'string' },
      'cancel-share': { type: 'string' },
      'orders-around': { type: 'string' },
      settle: { type: 'string' },
      report: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  }).values
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${HELP}`)
  process.exit(2)
}
if (parsed.help) {
  process.stdout.write(HELP)
  process.exit(0)
}
const say = (line: string) => console.log(`[cluster] ${line}`)
try {
  const report = await runCluster({
    ratePerS: number('rate', parsed.rate, 5, 200),
    cancelShare: number('cancel-share', parsed['cancel-share'], 0.1, 1),
    ordersAround: number('orders-around', parsed['orders-around'], 50),
    settleS: number('settle', parsed.settle, 180),
    keep: parsed.keep ?? false,
    say,
  })
  say(
    `${report.ok ? 'PASS' : 'FAIL'}: ${report.faults.length} faults in ${report.totalS} s (start ${report.startS} s); tap reconnected ${report.tapReconnects} times`,
  )
  say(`versions: ${JSON.stringify(report.versions)}`)
  if (parsed.report) fs.writeFileSync(parsed.report, `${JSON.stringify(report, null, 2)}\n`)
  process.exit(report.ok ? 0 : 1)
} catch (error) {
  say(`FAIL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exit(1)
}
