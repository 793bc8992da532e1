import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

// Two lanes (CONTRIBUTING.md, "Tests and checks"). The unit lane holds the test files that start no
// server, process or worker (test/unit-lane.json; npm run lint:deps keeps it so) and runs them in
// parallel first. The integration lane starts real servers on 127.0.0.1 and measures time; it runs
// two files at a time, the most two cores carry with the timing assertions still meaning something
// (every one of them holds its verdict to honesty beside a busy neighbour, not to a quiet host).
const UNIT: string[] = (JSON.parse(readFileSync(new URL('./test/unit-lane.json', import.meta.url), 'utf8')) as { files: string[] }).files

// Runs last, by itself: an A/B of a 10 % slower engine whose assertion is an exact regression, where
// a neighbouring file's load saturates the client on every retry (client_saturated: unmeasured).
const ALONE = ['test/ab/ab-cli.test.ts']

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...ALONE], maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
})
