import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports.js'

const run = promisify(execFile)

/** A PostgreSQL server of one test file's own (see `startPrivatePostgres`). */
export interface PrivatePostgres {
  /** Superuser URL of its `postgres` database, e.g. `postgresql://postgres@127.0.0.1:41234/postgres`. */
  url: string
  /** Restarts it (`pg_ctl restart -m fast`): every session is cut, as an operator's restart does. */
  restart(): Promise<void>
  /** Stops it at once and removes its data directory. */
  stop(): Promise<void>
}

/**
 * The directory of PostgreSQL's server programs: PG_BINDIR, else the newest
 * `/usr/lib/postgresql/<major>/bin` (Debian's layout).
 * @throws Error naming the package to install when there is none
 */
function serverBinaries(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR
  const root = '/usr/lib/postgresql'
  const majors = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : []
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0]
  if (!newest || !existsSync(join(root, newest, 'bin', 'initdb')))
    throw new Error('no PostgreSQL server programs: install postgresql (Debian) or set PG_BINDIR')
  return join(root, newest, 'bin')
}

/**
 * Starts a PostgreSQL server for one test file: `initdb` into a new temporary directory (trust
 * authentication, no fsync of the new files), then `pg_ctl start` on a free port of 127.0.0.1 with
 * its socket in that directory. For faults that would hit everyone on the shared server, such as a
 * restart. About a second. As root it runs the server programs as the `postgres` user (PostgreSQL
 * refuses root); otherwise as the caller. A test process that exits without `stop()` stops it too.
 * @throws Error with pg_ctl's output when the server does not start
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = serverBinaries()
  const dir = mkdtempSync(join(tmpdir(), 'saga-postgres-'))
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, uid)
  }
  const pg = (program: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { timeout: 60_000 })
      : run(join(bin, program), args, { timeout: 60_000 })
  const data = join(dir, 'data')
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'])

  let port = 0
  // The server's output goes to a log file: on the pipes of pg_ctl it would hold them open, and
  // pg_ctl's exit would never be seen.
  const serve = () => [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
  ]
  const stopNow = () => {
    try {
      const args = ['-D', data, '-m', 'immediate', 'stop']
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args])
      else execFileSync(join(bin, 'pg_ctl'), args)
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true })
  }
  // A port chosen free may be taken before the server binds it: another one, a few times.
  for (let attempt = 1; ; attempt++) {
    port = await freePort()
    try {
      await pg('pg_ctl', [...serve(), '-w', 'start'])
      break
    } catch (error) {
      if (attempt === 3) {
        stopNow()
        throw error
      }
    }
  }
  process.once('exit', stopNow)
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async restart() {
      await pg('pg_ctl', [...serve(), '-m', 'fast', '-w', 'restart'])
    },
    stop() {
      process.removeListener('exit', stopNow)
      stopNow()
      return Promise.resolve()
    },
  }
}
