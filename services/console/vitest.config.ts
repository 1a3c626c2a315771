import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // A worker keeps its imports from one file to the next (isolate: false): each file makes its own
    // databases and broker names, and a fresh worker per file cost more CPU than the tests themselves
    // (docs/operations.md#tests-and-ci).
    isolate: false,
    // src/**/*.unit.test.ts takes in the UI's pure modules too (src/ui/src/*.unit.test.ts); the UI's
    // components are not tested here (they need a browser).
    include: ['src/**/*.unit.test.ts', 'test/**/*.test.ts'],
    exclude: ['node_modules/**'],
    // Deadlines that only end a hang: a loaded machine (2 busy cores in CI) runs every step late.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
})
