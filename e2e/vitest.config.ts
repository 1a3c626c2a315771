import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // The files of this workspace run in one worker that keeps its imports (isolate: false): each
    // file makes its own databases and broker names, and a fresh worker per file cost more CPU than
    // the tests themselves (docs/operations.md#tests-and-ci).
    isolate: false,
    include: ['src/**/*.unit.test.ts', 'test/**/*.e2e.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
})
