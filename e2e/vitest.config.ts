import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.unit.test.ts', 'test/**/*.e2e.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
})
