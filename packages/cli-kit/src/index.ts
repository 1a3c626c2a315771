/**
 * The convention every command-line tool of the fleet follows (`npm run order`, `npm run load`,
 * `npm run soak`, `npm start`, `npm run bootstrap`), built on commander:
 *
 * - `-h`/`--help` on every command and subcommand (and `help [command]` where there are
 *   subcommands) prints the help to stdout and exits 0; `-V`/`--version` prints the version. A
 *   command with subcommands run without one prints its help to stderr, a usage error.
 * - A usage error (unknown command or option, a missing or invalid argument, an option value that
 *   does not parse) prints one line to stderr, with "did you mean" for a typo, then a hint naming
 *   the command's own `--help`, and exits 2. Exit 1 is left for a command that ran and failed (a
 *   server refused, a dependency did not answer), 0 for success.
 * - Every error goes to stderr, results to stdout; an unexpected error prints its message, not a
 *   stack trace.
 * - A reader that goes away (`| head -1`: EPIPE on stdout) ends the process quietly, exit 0.
 */
import { readFileSync } from 'node:fs'
import {
  Command,
  CommanderError,
  InvalidArgumentError,
  type CommandUnknownOpts,
  type OptionValues,
} from '@commander-js/extra-typings'

export {
  Argument,
  Command,
  InvalidArgumentError,
  Option,
  type CommandUnknownOpts,
} from '@commander-js/extra-typings'

/** Exit codes of the convention. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** A usage problem found after parsing (two options that do not go together, a missing one). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * The version in the package.json nearest above `moduleUrl` (a module's `import.meta.url`), e.g.
 * `0.1.0`; `unknown` when there is none.
 */
export function packageVersion(moduleUrl: string): string {
  for (let dir = new URL('./', moduleUrl); ; dir = new URL('../', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version?: string }
      if (pkg.version) return pkg.version
    } catch {
      // no package.json here; look one level up
    }
    if (dir.pathname === '/') return 'unknown'
  }
}

/**
 * A program with the convention's settings, e.g. `createCli({ name: 'npm run order --', description,
 * version })`. Subcommands made with `.command()` inherit them. Run it with `runCli`.
 */
export function createCli(options: { name: string; description: string; version: string }) {
  return new Command(options.name)
    .description(options.description)
    .version(options.version, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void process.stdout.write(text),
      writeErr: (text) => void process.stderr.write(text),
      // commander puts "did you mean" on a line of its own; the convention keeps the error to one.
      outputError: (text, write) => write(text.replace(/\n\(Did you mean (.+)\?\)/, ' (did you mean $1?)')),
    })
}

/** `npm run order -- dlq list` for the command `list` under `dlq` under the program. */
export function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = []
  for (let c: CommandUnknownOpts | null = command; c; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/** Every command of the tree under `root`, `root` first, depth first. */
export function allCommands(root: CommandUnknownOpts): CommandUnknownOpts[] {
  return [root, ...root.commands.flatMap((c) => allCommands(c))]
}

/**
 * Parses `argv` (the arguments after the script, e.g. `['place', '--sku', 'A']`) and runs the action
 * it names, applying the convention: each command's usage errors end with `Run '<its path> --help'
 * for usage.`; a `UsageError` thrown by an action is reported as commander reports its own; an
 * action's other error prints its message (no stack) to stderr with exit code 1; help, version and
 * usage errors set the exit codes above. An action sets `process.exitCode` for its own outcome.
 * Never throws; sets `process.exitCode`.
 */
export async function runCli(
  program: CommandUnknownOpts,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  endQuietlyOnClosedPipe()
  for (const command of allCommands(program)) {
    command.showHelpAfterError(`Run '${commandPath(command)} --help' for usage.`)
    if (command.commands.length > 0) command.helpCommand('help [command]', 'print the help of a command')
  }
  try {
    await program.parseAsync(withoutHelpAfterUnknownCommand(program, argv), { from: 'user' })
  } catch (error) {
    if (error instanceof CommanderError) {
      const shown = ['commander.helpDisplayed', 'commander.version'].includes(error.code)
      const help = error.code === 'commander.help' && error.exitCode === 0
      process.exitCode = shown || help ? EXIT.ok : EXIT.usage
      return
    }
    if (error instanceof UsageError) {
      const command = usageErrorCommand.get(error) ?? program
      try {
        command.error(`error: ${error.message}`, { exitCode: EXIT.usage, code: 'saga.usage' })
      } catch {
        // exitOverride turned commander's exit into a throw; the message is written
      }
      process.exitCode = EXIT.usage
      return
    }
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = EXIT.failed
  }
}

/**
 * For a script whose work follows at its top level (`npm start`): parses `argv` by the convention
 * and returns the options; help, version and usage errors end the process here with their exit
 * code, so the script only goes on with valid options.
 */
export async function parseOptions<Opts extends OptionValues>(
  program: Command<[], Opts>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<Opts> {
  let parsed: Opts | undefined
  program.action(() => {
    parsed = program.opts()
  })
  await runCli(program, argv)
  if (parsed === undefined) process.exit()
  return parsed
}

/**
 * commander answers `--help` before it looks at the command name, so `order parkd --help` would
 * print the program's help with exit 0 and hide the typo. When a command with subcommands is given a
 * word that is none of them, the arguments are cut to the path up to that word, which commander then
 * refuses as an unknown command (with "did you mean"). Other arguments are returned as they are.
 */
function withoutHelpAfterUnknownCommand(program: CommandUnknownOpts, argv: readonly string[]): string[] {
  const path: string[] = []
  let command = program
  let skipValue = false
  for (const token of argv) {
    if (skipValue) {
      skipValue = false
      continue
    }
    // A command with subcommands takes flags (-h, -V) and options with a value (`--prefix p_`): the
    // first other word names the subcommand.
    if (token.startsWith('-')) {
      const option = command.options.find((o) => o.long === token || o.short === token)
      skipValue = option?.required === true
      continue
    }
    if (command.commands.length === 0 || token === 'help') return [...argv]
    const next = command.commands.find((c) => c.name() === token || c.aliases().includes(token))
    if (!next) return [...path, token]
    path.push(token)
    command = next
  }
  return [...argv]
}

const usageErrorCommand = new WeakMap<UsageError, CommandUnknownOpts>()

/**
 * A `UsageError` reported as a usage error of `command` (its hint names that command's help).
 * Example: `throw usageError(cmd, 'place needs at least one --sku')`.
 */
export function usageError(command: CommandUnknownOpts, message: string): UsageError {
  const error = new UsageError(message)
  usageErrorCommand.set(error, command)
  return error
}

let pipeHandled = false

/**
 * A closed stdout or stderr (the reader of a pipe exited: `| head -1`) ends the process at once,
 * quietly and with exit code 0, as `cat` and `git log` do, instead of an unhandled `write EPIPE`.
 */
export function endQuietlyOnClosedPipe(): void {
  if (pipeHandled) return
  pipeHandled = true
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(EXIT.ok)
      throw error
    })
  }
}

/** Option and argument parsers: each returns the value or throws commander's InvalidArgumentError. */
/** A decimal number as a person types one: `12`, `-1`, `2.5`, `.5`, `1e3`; not `0x10`, `Infinity`. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

export const parse = {
  /** A whole number above 0, e.g. `--timeout 30000`. */
  positiveInteger: (value: string): number => {
    const n = Number(value)
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0)
      throw new InvalidArgumentError('expected a whole number above 0')
    return n
  },
  /** A decimal number above 0, fractions allowed, e.g. `--rate 2.5`. */
  positiveNumber: (value: string): number => {
    const n = Number(value)
    if (!DECIMAL.test(value.trim()) || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError('expected a number above 0')
    return n
  },
  /**
   * Any finite decimal number, e.g. `--qty -1`, which a server may then refuse with a reason of its
   * own. Written in decimal only: `Number` would also read `0x10` as 16 and `0b11` as 3.
   */
  number: (value: string): number => {
    const n = Number(value)
    if (!DECIMAL.test(value.trim()) || !Number.isFinite(n))
      throw new InvalidArgumentError('expected a number')
    return n
  },
  /** A UUID, e.g. an order or message id (RFC 9562 form, any version). */
  uuid: (value: string): string => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value))
      throw new InvalidArgumentError('expected a uuid such as 0192a4c1-7f3e-7d11-9c4b-3f2a1e0d5c6b')
    return value
  },
}

/** A parser for a repeatable option: each occurrence appended, parsed by `each`. `--sku A --sku B` -> `['A', 'B']`. */
export function repeatable<T>(each: (value: string) => T): (value: string, previous: T[] | undefined) => T[] {
  return (value, previous) => [...(previous ?? []), each(value)]
}
