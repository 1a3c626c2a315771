import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

/** One integration or end-to-end test file: its workspace folder and its path in it. */
export interface TestFile {
  /** Relative to the repository root, e.g. `packages/messaging`. */
  workspace: string
  /** Relative to the workspace, e.g. `test/relay.int.test.ts`. */
  file: string
}

/** `packages/messaging/test/relay.int.test.ts`: how a file is named in filters and reports. */
export const pathOf = (f: TestFile): string => `${f.workspace}/${f.file}`

/** Workspace folders of the repository: `packages/*`, `services/*`, `e2e`. */
function workspaces(root: string): string[] {
  const under = (dir: string) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${dir}/${d.name}`)
      : []
  return [...under('packages'), ...under('services'), 'e2e'].filter((w) =>
    existsSync(join(root, w, 'package.json')),
  )
}

/**
 * Every integration (`*.int.test.ts`) and end-to-end (`*.e2e.test.ts`) file in the workspaces'
 * `test/` folders, sorted, keeping those whose path holds one of `filters` (all when none).
 */
export function integrationFiles(root: string, filters: readonly string[] = []): TestFile[] {
  return workspaces(root)
    .flatMap((workspace) => {
      const dir = join(root, workspace, 'test')
      if (!existsSync(dir)) return []
      return readdirSync(dir)
        .filter((name) => /\.(int|e2e)\.test\.ts$/.test(name))
        .map((name) => ({ workspace, file: `test/${name}` }))
    })
    .filter((f) => filters.length === 0 || filters.some((filter) => pathOf(f).includes(filter)))
    .sort((a, b) => pathOf(a).localeCompare(pathOf(b)))
}

/** One run of one file: which file, and which of its `runs`. */
export interface Job {
  file: TestFile
  /** 1-based. */
  run: number
}

/**
 * The order of the runs: round by round (every file once, then every file again), so that files
 * running side by side are different files, as in `npm test`, and a stopped run has seen each file.
 */
export function planJobs(files: readonly TestFile[], runs: number): Job[] {
  const jobs: Job[] = []
  for (let run = 1; run <= runs; run++) for (const file of files) jobs.push({ file, run })
  return jobs
}
