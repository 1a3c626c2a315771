import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // A worker keeps its imports from one file to the next (isolate: false): each file makes its own
    // databases and broker names, and a fresh worker per file cost more CPU than the tests themselves
    // (docs/operations.md#tests-and-ci).
    isolate: false,
    include: ['src/**/*.unit.test.ts', 'test/**/*.test.ts'],
    // The CLI tests run the built CLI as child processes, several per test: vitest's 5 s default
    // is less than one start takes on a loaded machine. These only end a hang.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
