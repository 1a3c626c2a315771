// A small CLI on the convention, for the tests: `lines` prints --count numbered lines, `fail`
// throws, `usage` throws a usage error, `nested deep` has a subcommand of a subcommand.
/* global process, setImmediate */
import { createCli, parse, runCli, usageError } from '../dist/index.js'

const program = createCli({ name: 'lines-cli', description: 'prints lines', version: '1.2.3' }).option(
  '--prefix <p>',
  'put <p> before every line',
  '',
)
program
  .command('lines')
  .description('print --count lines')
  .option('--count <n>', 'how many', parse.positiveInteger, 100_000)
  .action(async (options) => {
    const prefix = program.opts().prefix
    for (let i = 0; i < options.count; i++) {
      process.stdout.write(`${prefix}line ${i}\n`)
      // Yield now and then, as a real command awaiting I/O does.
      if (i % 1_000 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
  })
program
  .command('fail')
  .description('fail at run time')
  .action(() => {
    throw new Error('the server said no')
  })
program
  .command('usage')
  .description('refuse its options after parsing')
  .action((_options, command) => {
    throw usageError(command, 'give one of --a or --b')
  })
program
  .command('nested')
  .description('a group')
  .command('deep')
  .description('a leaf')
  .action(() => undefined)

await runCli(program)
