import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { integrationFiles, planJobs } from './plan.js'
import { formatResults, resultsByFile } from './report.js'
import { failuresOf } from './run-file.js'

const root = mkdtempSync(join(tmpdir(), 'stress-plan-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
for (const [workspace, files] of [
  ['packages/a', ['x.int.test.ts', 'y.unit.test.ts', 'helper.ts']],
  ['services/b', ['z.int.test.ts']],
  ['e2e', ['w.e2e.test.ts']],
] as const) {
  mkdirSync(join(root, workspace, 'test'), { recursive: true })
  writeFileSync(join(root, workspace, 'package.json'), '{}')
  for (const file of files) writeFileSync(join(root, workspace, 'test', file), '')
}

describe('the stress plan', () => {
  it('when the repository is read, then its integration and e2e files are found, not unit tests or helpers', () => {
    expect(integrationFiles(root).map((f) => `${f.workspace}/${f.file}`)).toEqual([
      'e2e/test/w.e2e.test.ts',
      'packages/a/test/x.int.test.ts',
      'services/b/test/z.int.test.ts',
    ])
  })

  it('when filters are given, then only the files whose path holds one are kept', () => {
    expect(integrationFiles(root, ['services/', 'w.e2e']).map((f) => f.file)).toEqual([
      'test/w.e2e.test.ts',
      'test/z.int.test.ts',
    ])
  })

  it('when planned, then the runs go round by round, every file once a round', () => {
    const files = integrationFiles(root)
    const jobs = planJobs(files, 2)
    expect(jobs.map((j) => `${j.run} ${j.file.file}`)).toEqual([
      '1 test/w.e2e.test.ts',
      '1 test/x.int.test.ts',
      '1 test/z.int.test.ts',
      '2 test/w.e2e.test.ts',
      '2 test/x.int.test.ts',
      '2 test/z.int.test.ts',
    ])
  })
})

describe('the stress report', () => {
  it("when vitest's JSON report names failed tests and a file error, then each is a failure with its first line", () => {
    expect(
      failuresOf({
        testResults: [
          {
            message: '\u001b[31mError: hook timed out\u001b[39m\n  at x',
            assertionResults: [
              { fullName: 'a > passes', status: 'passed' },
              {
                fullName: 'a > fails',
                status: 'failed',
                failureMessages: ['\nAssertionError: 1 !== 2\n  at y'],
              },
            ],
          },
        ],
      }),
    ).toEqual([
      { test: 'a > fails', error: 'AssertionError: 1 !== 2' },
      { test: '(the file)', error: 'Error: hook timed out' },
    ])
  })

  it('when runs failed alike, then the failure is listed once with how often, and the totals count the runs', () => {
    const [x, z] = [
      { workspace: 'packages/a', file: 'test/x.int.test.ts' },
      { workspace: 'services/b', file: 'test/z.int.test.ts' },
    ]
    const failure = { test: 'a > fails', error: 'AssertionError: 1 !== 2' }
    const results = resultsByFile(
      [x, z],
      [
        { file: x, outcome: { ok: false, ms: 2_000, failures: [failure] } },
        { file: z, outcome: { ok: true, ms: 1_000, failures: [] } },
        { file: x, outcome: { ok: false, ms: 4_000, failures: [failure] } },
        { file: x, outcome: { ok: true, ms: 3_000, failures: [] } },
      ],
    )
    expect(results[0]).toMatchObject({
      runs: 3,
      failed: 2,
      seconds: [2, 4, 3],
      failures: [{ ...failure, times: 2 }],
    })
    const text = formatResults(results, 'header')
    expect(text).toContain('FAIL  packages/a/test/x.int.test.ts  2/3 failed  median 3 s, slowest 4 s')
    expect(text).toContain('        2x a > fails: AssertionError: 1 !== 2')
    expect(text).toContain('ok    services/b/test/z.int.test.ts  0/1 failed')
    expect(text.split('\n').at(-1)).toBe('4 runs of 2 files: 2 failed, in 1 file')
  })
})
