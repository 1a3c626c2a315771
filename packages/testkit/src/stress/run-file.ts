import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestFile } from './plan.js'

/** A failed test of one run: its full name (describe > it) and the first line of its error. */
export interface Failure {
  test: string
  error: string
}

/** How one run of one file ended. */
export interface RunOutcome {
  ok: boolean
  ms: number
  /** Empty when `ok`; a run that failed without naming a test has one entry naming the exit. */
  failures: Failure[]
}

/** The parts of vitest's JSON report read here (`--reporter=json`, Jest's shape). */
interface JsonReport {
  testResults?: Array<{
    message?: string
    assertionResults?: Array<{ fullName: string; status: string; failureMessages?: string[] }>
  }>
}

const ANSI_COLOUR = new RegExp(String.raw`\u001b\[[0-9;]*m`, 'g')

const firstLine = (text: string): string =>
  text
    .replace(ANSI_COLOUR, '')
    .split('\n')
    .map((line) => line.trim())
    .find(Boolean) ?? ''

/** The failed tests a JSON report names, and the file-level errors (a hook, an unhandled error). */
export function failuresOf(report: JsonReport): Failure[] {
  return (report.testResults ?? []).flatMap((file) => [
    ...(file.assertionResults ?? [])
      .filter((t) => t.status === 'failed')
      .map((t) => ({ test: t.fullName, error: firstLine(t.failureMessages?.[0] ?? '') })),
    ...(file.message ? [{ test: '(the file)', error: firstLine(file.message) }] : []),
  ])
}

/**
 * Runs one test file once in a process of its own (`vitest run <file>` in its workspace, the JSON
 * reporter into a temporary file), stopped with SIGKILL after `timeoutMs`.
 * @param vitest the vitest executable (the repository's `node_modules/.bin/vitest`)
 */
export async function runFile(
  root: string,
  vitest: string,
  file: TestFile,
  timeoutMs: number,
): Promise<RunOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'saga-stress-'))
  const report = join(dir, 'report.json')
  const started = performance.now()
  let stderr = ''
  const code = await new Promise<number | string>((resolve) => {
    const child = spawn(vitest, ['run', file.file, '--reporter=json', `--outputFile=${report}`], {
      cwd: join(root, file.workspace),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (error) => resolve(error.message))
    child.on('exit', (exitCode, signal) => {
      clearTimeout(timer)
      resolve(exitCode ?? `killed by ${signal} after ${timeoutMs} ms`)
    })
  })
  const ms = performance.now() - started
  let failures: Failure[] = []
  try {
    failures = failuresOf(JSON.parse(readFileSync(report, 'utf8')) as JsonReport)
  } catch {
    // no report: the process died, or never got as far as writing one
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  if (code === 0 && failures.length === 0) return { ok: true, ms, failures }
  if (failures.length === 0)
    failures = [
      { test: '(the run)', error: `exit ${code}: ${firstLine(stderr.split('\n').slice(-20).join('\n'))}` },
    ]
  return { ok: false, ms, failures }
}
