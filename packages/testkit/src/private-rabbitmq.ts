import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports.js'

const run = promisify(execFile)

/** A RabbitMQ node of one test file's own (see `startPrivateRabbitmq`). */
export interface PrivateRabbitmq {
  /** `amqp://guest:guest@127.0.0.1:<port>`, its default vhost. */
  url: string
  /** Runs `rabbitmqctl -n <this node> …args` and resolves its standard output. */
  ctl(...args: string[]): Promise<string>
  /** Stops the node and removes its directory. */
  stop(): Promise<void>
}

/**
 * Hook bounds for a private node as a fixture (`useFixture(startPrivateRabbitmq, (b) => b.stop(),
 * PRIVATE_RABBITMQ_HOOKS)`): a start (start-up and wait, each bounded at 60 s) may take a good part
 * of a minute on a loaded machine, so creating allows both bounds; stopping allows one.
 */
export const PRIVATE_RABBITMQ_HOOKS = { createMs: 150_000, cleanupMs: 60_000 }

/** RabbitMQ's own scripts: RABBITMQ_BINDIR, else Debian's /usr/lib/rabbitmq/bin, else PATH. */
function rabbitmqScript(name: string): string {
  const dir = process.env.RABBITMQ_BINDIR ?? '/usr/lib/rabbitmq/bin'
  return existsSync(join(dir, name)) ? join(dir, name) : name
}

/**
 * Starts a RabbitMQ node for one test file, beside the shared one: its own node name, AMQP and
 * distribution ports (free ones of 127.0.0.1), data, logs, configuration, no plugins, and an Erlang
 * cookie in its own directory. For faults that would hit everyone on the shared broker, such as a
 * memory alarm, which blocks every publishing connection of the node. About 5 s and 5 s of CPU. As
 * root it runs as the `rabbitmq` user. A test process that exits without `stop()` kills it.
 * @throws Error with rabbitmqctl's output when the node does not start within 60 s
 */
export async function startPrivateRabbitmq(): Promise<PrivateRabbitmq> {
  const dir = mkdtempSync(join(tmpdir(), 'saga-rabbitmq-'))
  const node = `saga${randomBytes(4).toString('hex')}@localhost`
  const port = await freePort()
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(await freePort()),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  }
  writeFileSync(env.RABBITMQ_CONFIG_FILE, `listeners.tcp.default = 127.0.0.1:${port}\n`)
  writeFileSync(env.RABBITMQ_ENABLED_PLUGINS_FILE, '[].\n')
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'rabbitmq'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'rabbitmq'], { encoding: 'utf8' }).trim())
    for (const file of ['', 'rabbitmq.conf', 'enabled_plugins']) chownSync(join(dir, file), uid, gid)
  }
  const command = (script: string, args: string[]): [string, string[]] =>
    asRoot
      ? [
          'runuser',
          [
            '-u',
            'rabbitmq',
            '--',
            'env',
            ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
            script,
            ...args,
          ],
        ]
      : [script, args]
  const ctl = async (...args: string[]) => {
    const [file, argv] = command(rabbitmqScript('rabbitmqctl'), ['-n', node, ...args])
    return (await run(file, argv, { env, timeout: 60_000 })).stdout
  }
  const kill = () => {
    try {
      process.kill(Number(readFileSync(env.RABBITMQ_PID_FILE, 'utf8').trim()), 'SIGKILL')
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true })
  }

  const [file, argv] = command(rabbitmqScript('rabbitmq-server'), ['-detached'])
  try {
    await run(file, argv, { env, timeout: 60_000 })
    await ctl('wait', env.RABBITMQ_PID_FILE, '--timeout', '60')
  } catch (error) {
    kill()
    throw error
  }
  process.once('exit', kill)
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    ctl,
    async stop() {
      process.removeListener('exit', kill)
      await ctl('stop').catch(() => undefined)
      kill()
    },
  }
}
