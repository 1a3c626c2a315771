import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.unit.test.ts', 'test/**/*.test.ts'],
    // The smoke test starts a peer process and waits for its orders: only ends a hang.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
