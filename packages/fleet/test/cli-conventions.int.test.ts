import { randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { allCommands, commandPath, type CommandUnknownOpts } from '@saga/cli-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { orderProgram } from '../src/cli/program.js'
import { bootstrapProgram, startProgram } from '../src/fleet-cli.js'
import { closedUrl, orderCliEntry, runNode, serve } from './cli-processes.js'

const entry = (path: string) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url))

/** The fleet's command-line tools: the built entry point, and the program it runs (for its command tree). */
const tools: { entry: string; program: CommandUnknownOpts }[] = [
  { entry: orderCliEntry, program: orderProgram() },
  { entry: entry('start.js'), program: startProgram() },
  { entry: entry('bootstrap-cli.js'), program: bootstrapProgram() },
]

/** The arguments that name `command` under its program: `['dlq', 'list']`. */
const argsOf = (command: CommandUnknownOpts): string[] =>
  command.parent ? [...argsOf(command.parent), command.name()] : []

describe("the fleet's command-line tools", () => {
  // One case per command and flag: each spawns one process, so a loaded machine slows every case a
  // little instead of pushing one case holding all of them past its timeout.
  const helpCases = tools.flatMap((tool) =>
    allCommands(tool.program).flatMap((command) =>
      ['--help', '-h'].map((flag) => ({ what: `${commandPath(command)} ${flag}`, tool, command, flag })),
    ),
  )
  it.for(helpCases)(
    'when any command of any tool is given --help or -h ($what), then its help goes to stdout and it exits 0',
    async ({ what, tool, command, flag }) => {
      const result = await runNode(tool.entry, [...argsOf(command), flag])
      expect(result, what).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout, what).toMatch(new RegExp(`^Usage: ${commandPath(command)}`))
      // No internal notes (issue numbers, "see X") in what a user reads.
      expect(result.stdout, what).not.toMatch(/issue \d+/i)
    },
  )

  it('when --version is given, then each tool prints its version, exit 0', async () => {
    for (const tool of tools) {
      expect(await runNode(tool.entry, ['--version'])).toMatchObject({
        code: 0,
        stdout: '0.1.0\n',
        stderr: '',
      })
    }
  })

  it('when a command, option or value is wrong, then one line on stderr (with "did you mean") and a hint, exit 2, and nothing is contacted', async () => {
    const requests: string[] = []
    const orderService = await serve((request, response) => {
      requests.push(`${request.method} ${request.url}`)
      response.writeHead(500).end()
    })
    const env = { ORDER_SERVICE_URL: orderService.url }
    const id = randomUUID()
    try {
      const cases: [string[], string][] = [
        [['plcae', '--sku', 'A'], "error: unknown command 'plcae' (did you mean place?)"],
        [['follow', id, '--timout', '5'], "error: unknown option '--timout' (did you mean --timeout?)"],
        [['follow', id, '--timeout', 'abc'], "error: option '--timeout <ms>' argument 'abc' is invalid."],
        [
          ['place', '--sku', 'A', '--timeout', '0'],
          "error: option '--timeout <ms>' argument '0' is invalid.",
        ],
        [['place', '--sku', 'A', '--qty', 'two'], "error: option '--qty <n>' argument 'two' is invalid."],
        [['place', '--sku', 'A', '--qty', '1', '--qty', '2'], 'error: more --qty than --sku'],
        [['place'], "error: required option '--sku <sku>' not specified"],
        [['where', '--help-me'], "error: unknown option '--help-me'"],
        [
          ['where', 'not-a-uuid'],
          "error: command-argument value 'not-a-uuid' is invalid for argument 'orderId'",
        ],
        [['cancel', id, 'extra'], 'error: too many arguments'],
        [['dlq', 'requeue'], 'error: give a messageId or --all, not both and not neither'],
        [['dlq', 'lst'], "error: unknown command 'lst' (did you mean list?)"],
      ]
      for (const [args, message] of cases) {
        const result = await runNode(orderCliEntry, args, env)
        const lines = result.stderr.trimEnd().split('\n')
        expect(result.code, args.join(' ')).toBe(2)
        expect(result.stdout, args.join(' ')).toBe('')
        expect(lines, args.join(' ')).toHaveLength(2)
        expect(lines[0], args.join(' ')).toContain(message)
        expect(lines[1], args.join(' ')).toMatch(/^Run 'npm run order -- .*--help' for usage\.$/)
      }
      expect(requests).toEqual([])
      const start = await runNode(entry('start.js'), ['--prefix', 'Bad-Prefix'])
      expect(start.code).toBe(2)
      expect(start.stderr).toContain("error: option '--prefix <p>' argument 'Bad-Prefix' is invalid.")
    } finally {
      await orderService.close()
    }
  })

  it('when the order service refuses (400, 404, 409), then its answer goes to stderr and the exit code is 1', async () => {
    const orderService = await serve((request, response) => {
      response.setHeader('content-type', 'application/json')
      if (request.method === 'POST' && request.url === '/orders')
        return void response
          .writeHead(400)
          .end(JSON.stringify({ error: 'Bad Request', message: 'bad currency' }))
      if (request.url?.endsWith('/cancel'))
        return void response
          .writeHead(409)
          .end(JSON.stringify({ error: 'Conflict', message: 'order is CONFIRMED, not PENDING' }))
      response.writeHead(404).end(JSON.stringify({ error: 'Not Found', message: 'no such order' }))
    })
    const env = { ORDER_SERVICE_URL: orderService.url }
    const id = randomUUID()
    try {
      const placed = await runNode(orderCliEntry, ['place', '--sku', 'A', '--currency', 'XX'], env)
      expect(placed).toMatchObject({ code: 1, stdout: '' })
      expect(placed.stderr).toContain('POST /orders answered 400')
      expect(placed.stderr).toContain('bad currency')
      const cancelled = await runNode(orderCliEntry, ['cancel', id], env)
      expect(cancelled).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `POST /orders/${id}/cancel answered 409: order is CONFIRMED, not PENDING\n`,
      })
      const followed = await runNode(orderCliEntry, ['follow', id], env)
      expect(followed).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `no order ${id} at ${orderService.url}\n`,
      })
    } finally {
      await orderService.close()
    }
  })

  describe('with the broker away', () => {
    const posts: string[] = []
    let orderService: Awaited<ReturnType<typeof serve>>
    let env: Record<string, string>
    const orderId = randomUUID()

    beforeAll(async () => {
      orderService = await serve((request, response) => {
        posts.push(`${request.method} ${request.url}`)
        response.setHeader('content-type', 'application/json')
        response
          .writeHead(201)
          .end(JSON.stringify({ id: orderId, status: 'PENDING', total: { amount: 1999, currency: 'EUR' } }))
      })
      const broker = new URL(await closedUrl())
      env = { ORDER_SERVICE_URL: orderService.url, AMQP_URL: `amqp://guest:guest@${broker.host}` }
    })
    afterAll(async () => {
      await orderService?.close()
    })

    it('when place --follow runs, then the order is still placed and stderr says what cannot be followed and why', async () => {
      const result = await runNode(orderCliEntry, ['place', '--sku', 'MUG-001', '--follow'], env)
      expect(posts).toEqual(['POST /orders'])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe(`order ${orderId} placed: PENDING total {"amount":1999,"currency":"EUR"}\n`)
      const broker = new URL(env.AMQP_URL!).host
      expect(result.stderr).toContain(
        `cannot follow order ${orderId}: the broker at ${broker} did not answer (connect ECONNREFUSED ${broker}).`,
      )
      expect(result.stderr).toContain(`npm run order -- where ${orderId}`)
      expect(result.stderr).not.toContain('guest')
    })
  })

  it('when stdout is closed after the first line (| head -1), then the CLI ends quietly with exit 0', async () => {
    // `where` of an order nobody knows prints a line, then reads four databases that do not answer.
    const nowhere = new URL(await closedUrl()).port
    const env: NodeJS.ProcessEnv = { ...process.env, ORDER_SERVICE_URL: await closedUrl() }
    for (const s of ['ORDER', 'PAYMENT', 'INVENTORY', 'SHIPMENT'])
      env[`${s}_DATABASE_URL`] = `postgres://x:x@127.0.0.1:${nowhere}/x`
    const child = spawn(process.execPath, [orderCliEntry, 'where', randomUUID()], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [first] = (await once(child.stdout, 'data')) as [Buffer]
    child.stdout.destroy()
    const [code] = (await once(child, 'exit')) as [number | null]
    expect(first.toString()).toContain('did not answer')
    expect(stderr).toBe('')
    expect(code).toBe(0)
  })
})
