/**
 * A CloudEvents SDK reads what the relay publishes: the official JavaScript SDK (installed apart,
 * in a temporary copy of test/cloudevents-sdk, since its engines stop at Node 24) parses each
 * message of `golden-v2.json` (this build's output, pinned by wire-compat.int.test.ts) as a
 * structured-mode event, and refuses the same body under the earlier `application/json`.
 */
import { execFile, spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WIRE_ROWS, type WireMessage } from './wire/wire-fixture.js'

const run = promisify(execFile)
const sdkDir = fileURLToPath(new URL('./cloudevents-sdk', import.meta.url))
let workDir: string

/** Runs parse.mjs on `messages`; its stdout, stderr and exit code. */
function parseWithSdk(messages: Array<{ contentType: unknown; body: string }>) {
  return new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve, reject) => {
    const child = spawn(process.execPath, ['parse.mjs'], { cwd: workDir })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
    child.stdin.end(JSON.stringify(messages))
  })
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'cloudevents-sdk-'))
  for (const entry of ['package.json', 'package-lock.json', 'parse.mjs'])
    await cp(join(sdkDir, entry), join(workDir, entry))
  await run('npm', ['ci', '--no-audit', '--no-fund', '--engine-strict=false', '--loglevel=error'], {
    cwd: workDir,
    timeout: 240_000,
  })
}, 300_000)

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

describe('the CloudEvents SDK reads our messages', () => {
  it('when the SDK parses the published messages, then each is a CloudEvent with our attributes, extensions and data', async () => {
    const golden = JSON.parse(
      await readFile(new URL('./wire/golden-v2.json', import.meta.url), 'utf8'),
    ) as WireMessage[]
    const result = await parseWithSdk(
      golden.map((m) => ({ contentType: m.properties.contentType, body: m.body })),
    )
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const events = JSON.parse(result.stdout) as Array<Record<string, unknown>>
    expect(events.map((event) => event.id)).toEqual(WIRE_ROWS.map((row) => row.id))
    expect(events[0]).toMatchObject({
      specversion: '1.0',
      type: 'test.happened.v1',
      source: 'wire',
      subject: 'order-1',
      time: '2026-01-31T12:00:00.123Z',
      datacontenttype: 'application/json',
      correlationid: 'order-1',
      causationid: '01900000-0000-7000-8000-0000000000aa',
      data: { n: 1, text: 'ünïcödé ✓', nested: { list: [1, 2.5, null, true] } },
    })
    expect(events[2]).toMatchObject({ dataschema: 'urn:test:event:test.happened.v1', data: { n: 3 } })
  })

  it('when the same body comes with the earlier application/json, then the SDK does not see an event', async () => {
    const [first] = JSON.parse(
      await readFile(new URL('./wire/golden-v1.json', import.meta.url), 'utf8'),
    ) as WireMessage[]
    const result = await parseWithSdk([{ contentType: first!.properties.contentType, body: first!.body }])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/no cloud event detected/)
  })
})
