import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // A worker keeps its imports from one file to the next (isolate: false): each file makes its own
    // databases and broker names, and a fresh worker per file cost more CPU than the tests themselves
    // (docs/operations.md#tests-and-ci).
    isolate: false,
    include: ['src/**/*.unit.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two files at a time: each has its own databases, broker names and ports, and most of a file's
    // time is spent waiting on processes, the broker and the database (docs/operations.md#tests-and-ci).
    maxWorkers: 2,
  },
})
