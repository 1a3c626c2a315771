import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const cli = fileURLToPath(new URL('./lines-cli.js', import.meta.url))

/** Runs the test CLI; resolves with its exit code and output whatever the code. */
const lines = (...args: string[]) =>
  run(process.execPath, [cli, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )

describe('the CLI convention', () => {
  it('when -h, --help or help <command> is given at any level, then the help goes to stdout and the exit code is 0', async () => {
    for (const args of [
      ['-h'],
      ['--help'],
      ['lines', '--help'],
      ['nested', 'deep', '-h'],
      ['help', 'lines'],
    ]) {
      const result = await lines(...args)
      expect(result, args.join(' ')).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout, args.join(' ')).toMatch(/^Usage: lines-cli/)
    }
  })

  it("when the program's own option takes a value before the command, then the value is not taken for a command", async () => {
    expect(await lines('--prefix', 'p:', 'lines', '--count', '2')).toMatchObject({
      code: 0,
      stdout: 'p:line 0\np:line 1\n',
      stderr: '',
    })
    expect(await lines('--prefix', 'lines', 'lnes', '--help')).toMatchObject({
      code: 2,
      stderr: "error: unknown command 'lnes' (did you mean lines?)\nRun 'lines-cli --help' for usage.\n",
    })
  })

  it('when --version is given, then the version goes to stdout, exit 0', async () => {
    expect(await lines('--version')).toMatchObject({ code: 0, stdout: '1.2.3\n', stderr: '' })
  })

  it('when a command or option is mistyped, then stderr has one line with the suggestion and one naming the help, exit 2', async () => {
    expect(await lines('lnes')).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "error: unknown command 'lnes' (did you mean lines?)\nRun 'lines-cli --help' for usage.\n",
    })
    // --help does not hide a mistyped command: the typo is what is answered.
    expect(await lines('nested', 'dep', '--help')).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "error: unknown command 'dep' (did you mean deep?)\nRun 'lines-cli nested --help' for usage.\n",
    })
    expect(await lines('lines', '--cuont', '3')).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        "error: unknown option '--cuont' (did you mean --count?)\nRun 'lines-cli lines --help' for usage.\n",
    })
  })

  it('when an option value does not parse, or an action refuses its options, then it is a usage error, exit 2', async () => {
    const abc = await lines('lines', '--count', 'abc')
    expect(abc).toMatchObject({ code: 2, stdout: '' })
    expect(abc.stderr).toBe(
      "error: option '--count <n>' argument 'abc' is invalid. expected a whole number above 0\n" +
        "Run 'lines-cli lines --help' for usage.\n",
    )
    expect(await lines('usage')).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "error: give one of --a or --b\nRun 'lines-cli usage --help' for usage.\n",
    })
  })

  it('when a group is run without its subcommand, then its help goes to stderr, exit 2', async () => {
    const result = await lines('nested')
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toMatch(/^Usage: lines-cli nested/)
  })

  it('when a command fails at run time, then its message alone goes to stderr, exit 1', async () => {
    expect(await lines('fail')).toMatchObject({ code: 1, stdout: '', stderr: 'the server said no\n' })
  })

  it('when the reader of stdout goes away (| head -1), then the CLI ends at once, quietly, exit 0', async () => {
    const child = spawn(process.execPath, [cli, 'lines'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    // Read the first chunk, then close the pipe as `head -1` does.
    const [first] = (await once(child.stdout, 'data')) as [Buffer]
    child.stdout.destroy()
    const [code] = (await once(child, 'exit')) as [number | null]
    expect(first.toString()).toMatch(/^line 0\n/)
    expect(stderr).toBe('')
    expect(code).toBe(0)
  })
})
