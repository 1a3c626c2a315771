/**
 * The gate as CI runs it: the script, against the repository's corpus and against a fixture corpus
 * whose release predates a required field of the working tree (the breaking change a developer makes
 * when they add a field to an event without a new version).
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { RELEASED_DIR } from '../src/compat/corpus.js'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const gate = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const run = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/contracts-check.ts', ...args],
      { cwd: packageDir },
    )
    return { code: 0, ...run }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

const fixtures: string[] = []
afterAll(() => fixtures.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A copy of the repository's corpus in a temporary directory, for a test to change. */
function fixtureCorpus(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'contracts-check-'))
  fixtures.push(dir)
  cpSync(RELEASED_DIR, dir, { recursive: true })
  return dir
}

/** A released schema or payload list as a test edits it. */
interface Json {
  [key: string]: unknown
  properties: Record<string, unknown>
  required: string[]
}
const editJson = <T>(file: string, edit: (value: T) => void) => {
  const value = JSON.parse(readFileSync(file, 'utf8')) as T
  edit(value)
  writeFileSync(file, JSON.stringify(value))
}

describe('npm run contracts:check', () => {
  it('when the working tree is judged against the repository’s corpus, then it passes', async () => {
    const { code, stdout } = await gate()
    expect(stdout).toMatch(/contracts:check: compatible with the released corpus/)
    expect(code).toBe(0)
  })

  it('when the released OrderCreated had no paymentMethod, then the gate fails naming the event, field, consumer and what to do', async () => {
    const dir = fixtureCorpus()
    editJson(path.join(dir, 'schemas', 'order.created.v1.json'), (schema: Json) => {
      delete schema.properties.paymentMethod
      schema.required = schema.required.filter((name) => name !== 'paymentMethod')
    })
    editJson(path.join(dir, 'payloads', 'order.created.v1.json'), (payloads: Json[]) => {
      for (const payload of payloads) delete payload.paymentMethod
    })
    const { code, stdout } = await gate('--released', dir)
    expect(code).toBe(1)
    expect(stdout).toContain('✗ order.created.v1 paymentMethod: field added (added, required)')
    expect(stdout).toContain('consumers: payment/process-payment-when-order-created')
    expect(stdout).toContain('producer: order')
    expect(stdout).toContain('do: publish it as order.created.v2 beside order.created.v1, with an upcaster')
    expect(stdout).toContain('✗ order.created.v1 paymentMethod: payload refused')
    expect(stdout).toMatch(/contracts:check: \d+ breaking change\(s\) in order\.created\.v1\n$/)
  })

  it('when a released schema uses a construct the classifier does not judge, then the gate stops with exit 2 naming it', async () => {
    const dir = fixtureCorpus()
    editJson(path.join(dir, 'schemas', 'stock.released.v1.json'), (schema: Json) => {
      schema.properties.reason = { anyOf: [{ type: 'string' }, { type: 'null' }] }
    })
    const { code, stderr } = await gate('--released', dir)
    expect(code).toBe(2)
    expect(stderr).toContain("contracts:check: reason: keyword 'anyOf'")
  })
})
