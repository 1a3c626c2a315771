import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { repoRoot } from './service-process.js'

const run = promisify(execFile)

/** The four services' workspaces: what a release build compiles (with what they depend on). */
const SERVICE_WORKSPACES = ['order', 'payment', 'inventory', 'shipment'].map(
  (s) => `--filter=@saga/${s}-service`,
)

/**
 * A built copy of the repository at `commit`, to run an older release's services beside this
 * checkout's (a rolling upgrade): `<tmpdir>/saga-release-<commit's first 12 hex>/`, made once per
 * machine by `git archive` of the commit, `npm ci --prefer-offline` (the packages come from npm's
 * cache when this checkout installed the same versions) and a turbo build of the four services.
 * A finished build is marked by a `.built` file and reused; an interrupted one is made again.
 * Returns the copy's root. Throws when the commit is not in this repository's history (a shallow
 * clone, say) or a step fails, with the step's output.
 */
export async function releaseBuild(commit: string): Promise<string> {
  const root = path.join(os.tmpdir(), `saga-release-${commit.slice(0, 12)}`)
  const marker = path.join(root, '.built')
  if (fs.existsSync(marker)) return root
  fs.rmSync(root, { recursive: true, force: true })
  fs.mkdirSync(root, { recursive: true })
  const step = async (what: string, file: string, args: string[], cwd: string): Promise<void> => {
    try {
      await run(file, args, {
        cwd,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, CHECKPOINT_DISABLE: '1' },
      })
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
      throw new Error(`release ${commit}: ${what} failed: ${(stderr || stdout).slice(-2_000)}`, {
        cause: error,
      })
    }
  }
  const archive = path.join(root, 'release.tar')
  await step('git archive', 'git', ['archive', '--format=tar', '-o', archive, commit], repoRoot)
  await step('tar', 'tar', ['-xf', archive], root)
  fs.rmSync(archive)
  await step('npm ci', 'npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], root)
  await step(
    'build',
    'npx',
    ['turbo', 'run', 'build', '--output-logs=errors-only', ...SERVICE_WORKSPACES],
    root,
  )
  fs.writeFileSync(marker, `${new Date().toISOString()}\n`)
  return root
}
