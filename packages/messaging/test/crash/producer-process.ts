/**
 * The test's side of the crash matrix's producer (`producer.ts`): starts it as a child process,
 * reads its lines, and kills, stops or continues it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { CrashPoint } from './points.js'

const PRODUCER = fileURLToPath(new URL('./producer.ts', import.meta.url))

/** How to start the producer; see `producer.ts` for each setting's meaning. */
export interface ProducerSettings {
  mode: 'commit' | 'sweep'
  databaseUrl: string
  amqpUrl: string
  exchange: string
  crashAt?: CrashPoint
  stopWith?: 'freeze' | 'sigstop'
  /** The relay's publish timeout in the child, ms; its hold and guard are this plus 5 s. */
  publishTimeoutMs?: number
}

/** A running producer. */
export interface ProducerProcess {
  /** Writes one command line (`commit`, `commit-own`). */
  send(line: string): void
  /**
   * The first line the child printed, or prints, that matches `pattern` (its match).
   * @throws Error after `timeoutMs` (default 30 s) or when the child exits first, with its stderr
   */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  /** SIGKILL, resolved once the child has exited (a stopped child is killed too). */
  kill(): Promise<void>
  /** Sends `signal` (SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void
}

/** Starts the producer and waits for its `ready` line (its channel is open, its first sweep or warm-up done). */
export async function startProducer(settings: ProducerSettings): Promise<ProducerProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', PRODUCER], {
    env: {
      ...process.env,
      MODE: settings.mode,
      DATABASE_URL: settings.databaseUrl,
      AMQP_URL: settings.amqpUrl,
      EXCHANGE: settings.exchange,
      CRASH_AT: settings.crashAt ?? '',
      STOP_WITH: settings.stopWith ?? 'freeze',
      PUBLISH_TIMEOUT_MS: String(settings.publishTimeoutMs ?? 1_000),
    },
  })
  const producer = watch(proc)
  await producer.line(/^ready$/, 60_000)
  return producer
}

function watch(proc: ChildProcessWithoutNullStreams): ProducerProcess {
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const lines: string[] = []
  const listeners = new Set<() => void>()
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  let buffered = ''
  proc.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const complete = buffered.split('\n')
    buffered = complete.pop() ?? ''
    lines.push(...complete)
    for (const listener of listeners) listener()
  })
  void exited.then(() => {
    for (const listener of listeners) listener()
  })
  const gone = (): boolean => proc.exitCode !== null || proc.signalCode !== null

  return {
    send: (line) => void proc.stdin.write(`${line}\n`),
    line: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const match = lines.map((line) => pattern.exec(line)).find((found) => found !== null)
          if (match) done(() => resolve(match))
          else if (gone())
            done(() => reject(new Error(`producer exited before a line ${pattern}; stderr: ${stderr}`)))
        }
        const timer = setTimeout(
          () =>
            done(() =>
              reject(new Error(`producer: no line ${pattern} in ${timeoutMs} ms; stderr: ${stderr}`)),
            ),
          timeoutMs,
        )
        const done = (settle: () => void): void => {
          clearTimeout(timer)
          listeners.delete(check)
          settle()
        }
        listeners.add(check)
        check()
      }),
    async kill() {
      if (!gone()) proc.kill('SIGKILL')
      await exited
    },
    signal: (signal) => void proc.kill(signal),
  }
}
