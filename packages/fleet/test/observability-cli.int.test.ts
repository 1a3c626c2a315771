// Every order CLI command an alert or the runbook tells an operator to run exists in the CLI. The CLI
// is asked, not its source read: each command is run with --help by the built CLI, with every address
// pointing at a closed port (so a CLI that ignored --help would still touch nothing), and must not be
// refused as an unknown command.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { SERVICES } from '../src/bootstrap.js'

const run = promisify(execFile)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const cli = path.join(root, 'packages/fleet/bin/order.js')

// Port 1 on loopback: nothing listens, so every connection is refused at once.
const CLOSED = '127.0.0.1:1'
const isolated: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  AMQP_URL: `amqp://probe:probe@${CLOSED}/probe`,
  AMQP_EXCHANGE: 'cli-probe.events',
  ...Object.fromEntries(
    SERVICES.flatMap((s) => [
      [`${s.toUpperCase()}_SERVICE_URL`, `http://${CLOSED}`],
      [`${s.toUpperCase()}_DATABASE_URL`, `postgresql://probe@${CLOSED}/probe`],
      [`${s.toUpperCase()}_QUEUE_PREFIX`, `cli-probe.${s}`],
    ]),
  ),
}

/** The words of each `npm run order -- <command> [<subcommand>]` in `text` (placeholders and options dropped). */
export function namedCommands(text: string): string[] {
  const found = text.matchAll(/npm run (?:-s )?order(?::compose)? -- ([a-z][a-z-]*(?: [a-z][a-z-]*)?)/g)
  return [...new Set([...found].map((m) => m[1]!))]
}

/** What the CLI says to `<command> --help`, stdout and stderr together. */
async function ask(command: string): Promise<string> {
  const result = await run('node', [cli, ...command.split(' '), '--help'], {
    cwd: root,
    env: isolated,
    // Only ends a hung CLI (the test's own timeout is 60 s): a start takes seconds on a loaded machine.
    timeout: 50_000,
  }).catch((error: Error & { stdout?: string; stderr?: string; killed?: boolean }) => {
    if (error.killed) throw new Error(`order ${command} --help did not end within 50 s`)
    return { stdout: error.stdout ?? '', stderr: error.stderr ?? '' }
  })
  return `${result.stdout}${result.stderr}`
}

const refused = (answer: string) => /unknown (sub)?command|unknown argument|did you mean/i.test(answer)

const named = [
  ...(
    parse(fs.readFileSync(path.join(root, 'infra/observability/prometheus/alerts.yml'), 'utf8')) as {
      groups: { rules: { annotations: Record<string, string> }[] }[]
    }
  ).groups.flatMap((g) => g.rules.map((r) => Object.values(r.annotations).join('\n'))),
  fs.readFileSync(path.join(root, 'docs/runbook.md'), 'utf8'),
].flatMap(namedCommands)

describe('order CLI commands named by the alerts and the runbook', () => {
  it('when the texts are read, then they name the commands an operator needs', () => {
    expect(new Set(named)).toEqual(
      new Set(['help', 'where', 'dlq list', 'dlq requeue', 'dlq discard', 'parked list', 'parked retry']),
    )
    expect(
      namedCommands('run `npm run order -- parked retry <id>` or `npm run -s order -- where <orderId>`'),
    ).toEqual(['parked retry', 'where'])
  })

  it('when a command that does not exist is asked, then the CLI refuses it (the check can fail)', async () => {
    expect(refused(await ask('parkd'))).toBe(true)
  })

  it.each([...new Set(named)])('when `%s` is asked, then the CLI knows it', async (command) => {
    const answer = await ask(command)
    expect(refused(answer), `order ${command} --help answered:\n${answer}`).toBe(false)
  })
})
