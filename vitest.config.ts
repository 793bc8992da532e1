import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

// Lanes (CONTRIBUTING.md, "Tests and checks"). The unit lane holds the test files that start no
// server, process or worker (test/unit-lane.json; npm run lint:deps keeps it so) and runs them in
// parallel first. The integration lane starts real servers on 127.0.0.1 and measures time, two
// files at a time: its tests run at low concurrency against simulators that mostly sleep, so two
// files leave the two cores' worth of CPU to spare that a measurement needs. The files that were
// seen to fail beside another file run after it, alone.
const INTEGRATION_WORKERS = 2
const UNIT: string[] = (JSON.parse(readFileSync(new URL('./test/unit-lane.json', import.meta.url), 'utf8')) as { files: string[] }).files

// Run last, one at a time: files whose assertion is an exact verdict or an accuracy bound that a
// neighbouring file's load spoils. Each was seen to fail beside another file: the 10 %-slower A/B
// (client_saturated on every retry, also with GPU placement), the client's timing fidelity (p99
// error 9 ms against 6), the agreement of the client's ITL with the simulator's /metrics, the
// simulator's own sub-millisecond delay knobs, the bracketed sweep's crossing and the resumed
// sweep's curve (a repeat left without a valid crossing), an
// unchanged candidate judged against a baseline measured under a different neighbour's load (a false
// regression), and the gate, history and Action tests that compare a baseline and a candidate measured
// minutes apart on the simulator.
const ALONE = [
  'test/ab/ab-cli.test.ts',
  'test/ab/ab-gpu.test.ts',
  'test/load/fidelity.test.ts',
  'test/sweep/acceptance.test.ts',
  'test/gate/e2e-sim.test.ts',
  'test/gate/sim-gate.test.ts',
  'test/gate/open-loop-gate.test.ts',
  'test/gate/history-acceptance.test.ts',
  'test/action/base-terms.test.ts',
  'test/action/dist-watch.test.ts',
  'test/action/dist-fail-closed.test.ts',
  'test/sim/knobs.test.ts',
  'test/gate/bracket-sim.test.ts',
  'test/sweep/resume-cli.test.ts',
]

// The lanes that start servegate or sweep run the CLI and load worker bundled from the sources once per test run.
const BUILT = { globalSetup: ['test/setup/test-build.ts'], setupFiles: ['test/setup/use-test-build.ts'] }

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...ALONE],
          maxWorkers: INTEGRATION_WORKERS,
          sequence: { groupOrder: 1 },
          ...BUILT,
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, fileParallelism: false, sequence: { groupOrder: 2 }, ...BUILT },
      },
    ],
  },
})
