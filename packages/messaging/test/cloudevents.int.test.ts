/**
 * The official CloudEvents JavaScript SDK (installed apart, in a temporary copy of
 * test/cloudevents-sdk, since its engines stop at Node 24) and this package understand each other:
 * the SDK parses each message of `golden-v3.json` (this build's output, pinned by
 * wire-compat.int.test.ts) as a structured-mode event, and refuses the same body under the earlier
 * `application/json`; and a consumer handles events the SDK built with its defaults, in structured
 * and in binary content mode.
 */
import { execFile, spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import { AMQP_URL, useFixture } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collect, createInboxFixture, eventually, happened, recordingHandler } from './inbox-fixture.js'
import { WIRE_ROWS, type WireMessage } from './wire/wire-fixture.js'

const run = promisify(execFile)
const sdkDir = fileURLToPath(new URL('./cloudevents-sdk', import.meta.url))
let workDir: string

/** Runs `script` of the SDK's folder with `input` as JSON on stdin; its stdout, stderr and exit code. */
function runSdk(script: 'parse.mjs' | 'build.mjs', input: unknown) {
  return new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: workDir })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
    child.stdin.end(JSON.stringify(input))
  })
}

/** Runs parse.mjs on `messages`. */
const parseWithSdk = (messages: Array<{ contentType: unknown; body: string }>) =>
  runSdk('parse.mjs', messages)

/** A message as the SDK writes it for HTTP: headers (lower case) and a body. */
interface SdkMessage {
  headers: Record<string, string>
  body: string
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'cloudevents-sdk-'))
  for (const entry of ['package.json', 'package-lock.json', 'parse.mjs', 'build.mjs'])
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
      await readFile(new URL('./wire/golden-v3.json', import.meta.url), 'utf8'),
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
      tracestate: 'vendor=value',
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

describe('a consumer reads events the SDK built', () => {
  const fixture = useFixture(() => createInboxFixture('cloudevents'))

  it('when default SDK events come in structured and in binary mode, then each is handled once, its correlation id falling back as documented', async () => {
    const inputs = [
      { type: 'test.happened.v1', source: 'urn:sdk', data: { n: 1 } },
      { type: 'test.happened.v1', source: 'urn:sdk', subject: 'order-7', data: { n: 2 } },
    ]
    const result = await runSdk('build.mjs', inputs)
    expect(result.stderr).toBe('')
    const built = JSON.parse(result.stdout) as Array<{
      id: string
      structured: SdkMessage
      binary: SdkMessage
    }>
    const { signals } = await fixture.startConsumer([
      recordingHandler('sdk-structured'),
      // The same type on a key of its own, so each mode has a queue.
      recordingHandler('sdk-binary', undefined, { ...happened, routingKey: 'test.binary' }),
    ])
    const handled = collect(signals, 'handled')
    const dead = collect(signals, 'deadLettered')
    const connection = await amqp.connect(AMQP_URL)
    try {
      const channel = await connection.createConfirmChannel()
      for (const { structured, binary } of built) {
        const { 'content-type': structuredType } = structured.headers
        channel.publish(fixture.exchange, 'test.happened', Buffer.from(structured.body), {
          contentType: structuredType,
        })
        const { 'content-type': binaryType, ...ceHeaders } = binary.headers
        channel.publish(fixture.exchange, 'test.binary', Buffer.from(binary.body), {
          contentType: binaryType,
          headers: ceHeaders,
        })
      }
      await channel.waitForConfirms()
    } finally {
      await connection.close()
    }
    await eventually('all four handled', () => handled.length === 4 || dead.length > 0)
    expect(dead).toEqual([])
    const seen = handled.map((h) => [h.handler, h.id, h.correlationId]).sort()
    const [first, second] = built
    expect(seen).toEqual(
      [
        // No correlationid: the subject, else the event's own id.
        ['sdk-structured', first!.id, first!.id],
        ['sdk-structured', second!.id, 'order-7'],
        ['sdk-binary', first!.id, first!.id],
        ['sdk-binary', second!.id, 'order-7'],
      ].sort(),
    )
    expect((await fixture.effects()).map((e) => e.n).sort()).toEqual([1, 1, 2, 2])
  })
})
