// `npm run test:cluster [-- options]`: the fleet on three RabbitMQ nodes (docker-compose.cluster.yml)
// through a leader kill, node stops and a partition under load (cluster.ts). Needs Docker and free
// ports 3001-3005, 15432-15435, 5673-5675, 15672. Exits 0 when every fault passed, 1 when one
// failed or the run broke, 2 on bad options.
import fs from 'node:fs'
import { createCli, packageVersion, parse, parseOptions } from '@saga/cli-kit'
import { CANCEL_HELP, parseRate, parseShare } from '../soak/options.js'
import { runCluster } from './cluster.js'

/** `npm run test:cluster -- [options]` on the convention of @saga/cli-kit. */
export function clusterProgram() {
  return createCli({
    name: 'npm run test:cluster --',
    description:
      'Build the image, start docker-compose.cluster.yml (three RabbitMQ nodes, the fleet), put a ' +
      'steady load on it and, in turn, kill -9 the leader of the busiest quorum queue, stop each node ' +
      'a service is connected to, and cut one node off for 30 s; after each, check every order ' +
      'terminal, each effect once, nothing lost; print the recovery times; then down -v.',
    version: packageVersion(import.meta.url),
  })
    .option('--rate <n>', 'orders per second', parseRate, 5)
    .option('--cancel <share>', CANCEL_HELP, parseShare, 0.1)
    .option(
      '--orders-around <n>',
      'orders placed before each fault and again after it',
      parse.positiveInteger,
      50,
    )
    .option(
      '--settle <s>',
      'how long the fleet may take to settle after each fault',
      parse.positiveNumber,
      180,
    )
    .option('--report <file>', 'also write the report as JSON')
    .option('--keep', 'leave the cluster running (default: docker compose ... down -v)')
    .addHelpText('after', '\nExit codes: 0 every fault passed; 1 one failed or the run broke; 2 usage error.')
}

// --help, --version and a usage error end the process here, with exit codes 0, 0 and 2.
const options = await parseOptions(clusterProgram())
const say = (line: string) => console.log(`[cluster] ${line}`)
try {
  const report = await runCluster({
    ratePerS: options.rate,
    cancelShare: options.cancel,
    ordersAround: options.ordersAround,
    settleS: options.settle,
    keep: options.keep === true,
    say,
  })
  say(
    `${report.ok ? 'PASS' : 'FAIL'}: ${report.faults.length} faults in ${report.totalS} s ` +
      `(start ${report.startS} s); tap reconnected ${report.tapReconnects} times`,
  )
  say(`versions: ${JSON.stringify(report.versions)}`)
  if (options.report) fs.writeFileSync(options.report, `${JSON.stringify(report, null, 2)}\n`)
  process.exit(report.ok ? 0 : 1)
} catch (error) {
  say(`FAIL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exit(1)
}
