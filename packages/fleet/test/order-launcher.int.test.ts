import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const launcher = fileURLToPath(new URL('../bin/order.js', import.meta.url))

describe('npm run order (bin/order.js)', () => {
  it('when the CLI is not built, then it says to build first and exits 1 without a stack trace', async () => {
    const unbuilt = mkdtempSync(join(tmpdir(), 'saga-unbuilt-'))
    try {
      cpSync(launcher, join(unbuilt, 'bin', 'order.js'))
      const failure = await run('node', [join(unbuilt, 'bin', 'order.js'), 'help']).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      )
      expect(failure?.code).toBe(1)
      expect(failure?.stderr).toContain('not built yet')
      expect(failure?.stderr).toContain('npm run build')
      expect(failure?.stderr).not.toMatch(/\n\s+at /)
    } finally {
      rmSync(unbuilt, { recursive: true, force: true })
    }
  })

  it('when the CLI is built, then the launcher runs it with the arguments given', async () => {
    const { stdout } = await run('node', [launcher, 'help'])
    expect(stdout).toContain('usage: npm run order -- <command>')
  })
})
