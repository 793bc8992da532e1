import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration tests start real servers and measure time: run files one at a
    // time so two suites never compete for the 2 cores they measure on.
    fileParallelism: false,
  },
})
