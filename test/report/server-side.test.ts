import { describe, expect, it } from 'vitest'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { buildServerSideRows } from '../../src/report/server-side.js'
import { renderConsoleTable } from '../../src/report/table.js'
import type { RunResult, ServerSide } from '../../src/types.js'
import { point, result, run, serverSide, steady } from './fixtures.js'

const bad = [{ code: 'client_saturated' as const, detail: 'ELU 0.99' }]
const with_ = (r: RunResult, s: ServerSide | null, ramp: number | null = null): RunResult => ({
  ...r,
  server_side: s,
  steady_state: ramp === null ? null : steady(ramp),
})
// An engine with an ITL histogram but no TPOT one.
const srv = (ttft: number, itl: number, generated: number | null): ServerSide =>
  serverSide({ ttft: [ttft, ttft * 2], itl: [itl, itl * 2], tpot: null, e2el: [5000, 6000], generated })

const c1 = point(1, [
  with_(run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 }), srv(90, 19, 768), 0.01),
  with_(run(2, { ttft: [102, 112], itl: [20, 25], tput: 49, perUser: 49.8 }), srv(92, 19, 768), 0.02),
])
const c16 = point(16, [
  // A valid run whose server exposed no /metrics, and an invalid one whose figures must not count.
  with_(run(1, { ttft: [150, 300], itl: [30, 45], tput: 500, perUser: 33 }), null, 0.08),
  with_(run(2, { ttft: [150, 300], itl: [30, 45], tput: 500, perUser: 33, issues: bad }), srv(9999, 999, 1), 0.3),
])
const c64 = point(64, [with_(run(1, { ttft: [1, 1], itl: [1, 1], tput: 1, perUser: 1, issues: bad }), srv(9999, 999, 1), 0.12)])
const atTarget = [{ input_len: 4096, output_len: 512, runs: [{ repeat: 1, throughput: 500, concurrency: 16, bound: 'lower_bound' as const }] }]
const measured = result([c1, c16, c64], atTarget, [1, 16, 64, 128])

describe('server-side table', () => {
  it('follows the client table with medians of valid repeats, n/a, invalid and pending, never mixing clocks', () => {
    const text = renderConsoleTable(measured)
    expect(text.slice(text.indexOf('4,096 in / 512 out'))).toMatchInlineSnapshot(`
      "4,096 in / 512 out
      Concurrency  TTFT p50 / p99             ITL p50 / p99                Output tok/s    Tok/s/user  Output tok/s per GPU  Tok/s/user at p95 TPOT
      -----------  -------------------------  ---------------------------  ------------  ------------  --------------------  ----------------------
            1 [1]  101 (±1.0%) / 111 (±0.9%)  20.0 (±0.0%) / 25.0 (±0.0%)  48.5 (±1.0%)  49.8 (±0.0%)          12.1 (±1.0%)            44.4 (±0.0%)
        16 [2][3]  150 / 300                  30.0 / 45.0                           500          33.0                   125                    26.7
        64 [4][5]  invalid                    invalid                           invalid       invalid               invalid                 invalid
              128  pending                    pending                           pending       pending               pending                 pending
      Warmup: 4 requests per run discarded before measuring (auto: one per slot, at least 4). Ramp: 1–30% of each run's duration fell outside the steady-state window in which all C slots were busy; at C > 1 a run over 25%, or with no such window, is flagged ramp_dominated.
      Throughput at p95 TPOT ≤ 50 ms: ≥ 500 tok/s (≥ 125 tok/s per GPU over 4 GPUs) at C ≈ 16 — lower bound: target held at every concurrency, as far as measured figures reach (so far: some planned runs are still pending) (repeat 2 left out: no valid run; repeat 1 drawn through valid runs only, an invalid run being at or below the crossing)
      [1] C=1: 2 of 3 repeats measured so far.
      [2] C=16, repeat 2 is invalid and left out of the medians: the load generator was saturated (the client, not the server, was the bottleneck) — ELU 0.99.
      [3] C=16: 2 of 3 repeats measured so far.
      [4] C=64, repeat 1 is invalid and left out of the medians: the load generator was saturated (the client, not the server, was the bottleneck) — ELU 0.99.
      [5] C=64: 1 of 3 repeats measured so far.

      Server-side (from the server's /metrics, the server's own clock)
      Each cell: median across valid repeats (±half the min–max range); percentiles are interpolated within the server's histogram buckets. Generated tokens: the server's counter over the run; output tokens (client): the responses' usage, or content chunks without it.
      Concurrency  TTFT p50 / p99              ITL p50 / p99                TPOT p50 / p99  E2E p50 / p99                  Generated tokens (server)  Output tokens (client)
      -----------  --------------------------  ---------------------------  --------------  -----------------------------  -------------------------  ----------------------
                1  91.0 (±1.1%) / 182 (±1.1%)  19.0 (±0.0%) / 38.0 (±0.0%)  n/a             5,000 (±0.0%) / 6,000 (±0.0%)                768 (±0.0%)             768 (±0.0%)
               16  n/a                         n/a                          n/a             n/a                                                  n/a                     768
               64  invalid                     invalid                      invalid         invalid                                          invalid                 invalid
              128  pending                     pending                      pending         pending                                          pending                 pending"
    `)
  })

  it('is a labelled markdown table of its own', () => {
    const md = renderMarkdownReport(measured)
    expect(md).toContain(
      [
        "#### Server-side (from the server's /metrics, the server's own clock)",
        '',
        "Each cell: median across valid repeats (±half the min–max range); percentiles are interpolated within the server's histogram buckets. Generated tokens: the server's counter over the run; output tokens (client): the responses' usage, or content chunks without it.",
        '',
        '| Concurrency | TTFT p50 / p99 | ITL p50 / p99 | TPOT p50 / p99 | E2E p50 / p99 | Generated tokens (server) | Output tokens (client) |',
        '|---:|---|---|---|---|---:|---:|',
        '| 1 | 91.0 (±1.1%) / 182 (±1.1%) | 19.0 (±0.0%) / 38.0 (±0.0%) | n/a | 5,000 (±0.0%) / 6,000 (±0.0%) | 768 (±0.0%) | 768 (±0.0%) |',
        '| 16 | n/a | n/a | n/a | n/a | n/a | 768 |',
        '| 64 | invalid | invalid | invalid | invalid | invalid | invalid |',
        '| 128 | pending | pending | pending | pending | pending | pending |',
      ].join('\n'),
    )
    expect(md).not.toContain('9,999')
  })

  it('is left out when no run has server figures', () => {
    const plain = result([point(1, [run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 })])], [])
    expect(buildServerSideRows([1], plain.points)).toBeNull()
    expect(renderConsoleTable(plain)).not.toContain('Server-side')
    expect(renderMarkdownReport(plain)).not.toContain('Server-side')
  })
})
