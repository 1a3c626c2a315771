import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const cwd = fileURLToPath(new URL('..', import.meta.url))

// A service app in a child process (its stdout a pipe, as under concurrently or in a container)
// writes one line and closes: what reaches stdout is what a person or a log shipper would get.
const script = `
import { createServiceApp } from '@saga/service-kit'
const format = process.argv[1] === '-' ? undefined : process.argv[1]
const app = await createServiceApp({ service: 'kit', logLevel: 'info', logFormat: format })
app.log.info({ orderId: 'o-1' }, 'hello')
await app.close()
`
const linesOf = async (format: string) =>
  (await run('node', ['--input-type=module', '-e', script, format], { cwd })).stdout.trim().split('\n')

describe('service log lines', () => {
  it('when stdout is a pipe and LOG_FORMAT is unset, then each line is one JSON object', async () => {
    const lines = await linesOf('-')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      service: 'kit',
      orderId: 'o-1',
      msg: 'hello',
    })
  })

  it('when LOG_FORMAT is pretty, then pino-pretty writes the line for people, flushed before exit', async () => {
    const lines = await linesOf('pretty')
    expect(lines).toHaveLength(1)
    // eslint-disable-next-line no-control-regex
    const plain = lines[0]!.replace(/\u001b\[\d+m/g, '')
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: hello \{"orderId":"o-1"\}$/)
  })
})
