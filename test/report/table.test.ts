import { describe, expect, it } from 'vitest'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { atTargetSentence } from '../../src/report/model.js'
import { renderConsoleTable } from '../../src/report/table.js'
import type { AtTargetRun } from '../../src/types.js'
import { point, result, run } from './fixtures.js'

const c1 = point(1, [
  run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 }),
  run(2, { ttft: [101, 112], itl: [20.2, 26], tput: 49, perUser: 49.5 }),
  run(3, { ttft: [102, 114], itl: [20.4, 27], tput: 50, perUser: 49.1 }),
])
const c16 = point(16, [
  run(1, { ttft: [150, 300], itl: [30, 45], tput: 500, perUser: 33 }),
  run(2, {
    ttft: [900, 2000],
    itl: [80, 200],
    tput: 120,
    perUser: 10,
    issues: [{ code: 'requests_failed', detail: '3 of 192 requests failed (http_status ×3)' }],
  }),
  run(3, { ttft: [160, 320], itl: [31, 47], tput: 520, perUser: 32 }),
])
const interpolated: AtTargetRun[] = [
  { repeat: 1, throughput: 600, concurrency: 10.2, bound: 'interpolated' },
  { repeat: 2, throughput: 620, concurrency: 10.8, bound: 'interpolated' },
  { repeat: 3, throughput: 610, concurrency: 10.5, bound: 'interpolated' },
]
const measured = result([c1, c16], [{ input_len: 4096, output_len: 512, runs: interpolated }])

describe('renderConsoleTable', () => {
  it('shows medians with spread, invalid runs left out and explained, and pending for unmeasured concurrencies', () => {
    expect(renderConsoleTable(measured)).toMatchInlineSnapshot(`
      "servegate — sweep full — target p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user
      Engine: vllm 0.11.0 · Model: zai-org/GLM-5.3-Flash (revision abc123) · GPU: 4× NVIDIA B200 (driver 570.86, CUDA 12.8)
      Latencies in ms, client-side clock (monotonic, at the load generator; TTFT = request sent → first content token). Each cell: median across repeats (±half the min–max range); invalid runs are left out and noted.
      Per GPU: output tok/s ÷ GPUs serving the model (over 4 GPUs). Tok/s/user at p95 TPOT: 1000 / p95 TPOT, the decode speed the slowest 5 % of requests saw.
      Client headroom: ×5.0 at 4096×512 c=1, its heaviest point (100 token events/s, against the 500 this client handles before its busiest load thread is 50 % busy, where client_saturated fires).

      4,096 in / 512 out
      Concurrency  TTFT p50 / p99             ITL p50 / p99                Output tok/s    Tok/s/user  Output tok/s per GPU  Tok/s/user at p95 TPOT
      -----------  -------------------------  ---------------------------  ------------  ------------  --------------------  ----------------------
                1  101 (±1.0%) / 112 (±1.8%)  20.2 (±1.0%) / 26.0 (±3.8%)  49.0 (±2.0%)  49.5 (±0.7%)          12.3 (±2.0%)            43.3 (±2.6%)
           16 [1]  155 (±3.2%) / 310 (±3.2%)  30.5 (±1.6%) / 46.0 (±2.2%)   510 (±2.0%)  32.5 (±1.5%)           128 (±2.0%)            26.2 (±2.0%)
               64  pending                    pending                           pending       pending               pending                 pending
      Warmup: 4 requests per run discarded before measuring (auto: one per slot, at least 4).
      Throughput at p95 TPOT ≤ 50 ms: 610 tok/s (153 tok/s per GPU over 4 GPUs) (median of 3 repeats, range 600–620, CV 1.6%) at C ≈ 10.5 — interpolated between the last passing and first failing concurrency (so far: some planned runs are still pending) (repeat 2 drawn through valid runs only, an invalid run being at or below the crossing)
      [1] C=16, repeat 2 is invalid and left out of the medians: requests failed — 3 of 192 requests failed (http_status ×3)."
    `)
  })

  it('shows pending in every cell and for the target before anything is measured', () => {
    expect(renderConsoleTable(result([], []))).toMatchInlineSnapshot(`
      "servegate — sweep full — target p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user
      Engine: vllm 0.11.0 · Model: zai-org/GLM-5.3-Flash (revision abc123) · GPU: 4× NVIDIA B200 (driver 570.86, CUDA 12.8)
      Latencies in ms, client-side clock (monotonic, at the load generator; TTFT = request sent → first content token). Each cell: median across repeats (±half the min–max range); invalid runs are left out and noted.
      Per GPU: output tok/s ÷ GPUs serving the model (over 4 GPUs). Tok/s/user at p95 TPOT: 1000 / p95 TPOT, the decode speed the slowest 5 % of requests saw.
      Client headroom: not measured (no run recorded its load client).

      4,096 in / 512 out
      Concurrency  TTFT p50 / p99  ITL p50 / p99  Output tok/s  Tok/s/user  Output tok/s per GPU  Tok/s/user at p95 TPOT
      -----------  --------------  -------------  ------------  ----------  --------------------  ----------------------
                1  pending         pending             pending     pending               pending                 pending
               16  pending         pending             pending     pending               pending                 pending
               64  pending         pending             pending     pending               pending                 pending
      Throughput at p95 TPOT ≤ 50 ms: pending"
    `)
  })
})

describe('renderMarkdownReport', () => {
  it("renders the methodology's table, the target line, notes and the environment", () => {
    expect(renderMarkdownReport(measured)).toMatchInlineSnapshot(`
      "## servegate results — sweep \`full\`

      Target: p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user. Engine: vllm 0.11.0 · Model: zai-org/GLM-5.3-Flash (revision abc123) · GPU: 4× NVIDIA B200 (driver 570.86, CUDA 12.8).

      Latencies in ms, client-side clock (monotonic, at the load generator; TTFT = request sent → first content token). Each cell: median across repeats (±half the min–max range); invalid runs are left out and noted.

      Per GPU: output tok/s ÷ GPUs serving the model (over 4 GPUs). Tok/s/user at p95 TPOT: 1000 / p95 TPOT, the decode speed the slowest 5 % of requests saw.

      Client headroom: ×5.0 at 4096×512 c=1, its heaviest point (100 token events/s, against the 500 this client handles before its busiest load thread is 50 % busy, where client_saturated fires).

      ### 4,096 in / 512 out

      | Concurrency | TTFT p50 / p99 | ITL p50 / p99 | Output tok/s | Tok/s/user | Output tok/s per GPU | Tok/s/user at p95 TPOT |
      |---:|---|---|---:|---:|---:|---:|
      | 1 | 101 (±1.0%) / 112 (±1.8%) | 20.2 (±1.0%) / 26.0 (±3.8%) | 49.0 (±2.0%) | 49.5 (±0.7%) | 12.3 (±2.0%) | 43.3 (±2.6%) |
      | 16 [1] | 155 (±3.2%) / 310 (±3.2%) | 30.5 (±1.6%) / 46.0 (±2.2%) | 510 (±2.0%) | 32.5 (±1.5%) | 128 (±2.0%) | 26.2 (±2.0%) |
      | 64 | pending | pending | pending | pending | pending | pending |

      Warmup: 4 requests per run discarded before measuring (auto: one per slot, at least 4).

      **Throughput at p95 TPOT ≤ 50 ms: 610 tok/s (153 tok/s per GPU over 4 GPUs) (median of 3 repeats, range 600–620, CV 1.6%) at C ≈ 10.5 — interpolated between the last passing and first failing concurrency (so far: some planned runs are still pending) (repeat 2 drawn through valid runs only, an invalid run being at or below the crossing)**

      1. C=16, repeat 2 is invalid and left out of the medians: requests failed — 3 of 192 requests failed (http_status ×3).

      <details><summary>Spread across repeats</summary>

      Valid runs only; CV = sample standard deviation / mean.

      | Concurrency | Figure | Valid runs | Median | Min | Max | CV |
      |---:|---|---:|---:|---:|---:|---:|
      | 1 | TTFT p50 (ms) | 3 | 101 | 100 | 102 | 1.0% |
      | 1 | TTFT p99 (ms) | 3 | 112 | 110 | 114 | 1.8% |
      | 1 | ITL p50 (ms) | 3 | 20.2 | 20.0 | 20.4 | 1.0% |
      | 1 | ITL p99 (ms) | 3 | 26.0 | 25.0 | 27.0 | 3.8% |
      | 1 | Output tok/s | 3 | 49.0 | 48.0 | 50.0 | 2.0% |
      | 1 | Tok/s/user | 3 | 49.5 | 49.1 | 49.8 | 0.7% |
      | 16 | TTFT p50 (ms) | 2 | 155 | 150 | 160 | 4.6% |
      | 16 | TTFT p99 (ms) | 2 | 310 | 300 | 320 | 4.6% |
      | 16 | ITL p50 (ms) | 2 | 30.5 | 30.0 | 31.0 | 2.3% |
      | 16 | ITL p99 (ms) | 2 | 46.0 | 45.0 | 47.0 | 3.1% |
      | 16 | Output tok/s | 2 | 510 | 500 | 520 | 2.8% |
      | 16 | Tok/s/user | 2 | 32.5 | 32.0 | 33.0 | 2.2% |

      </details>

      <details><summary>Environment</summary>

      | | |
      |---|---|
      | Engine | vllm 0.11.0 |
      | Model | zai-org/GLM-5.3-Flash (revision abc123, root zai-org/GLM-5.3-Flash) |
      | GPU | 4 × NVIDIA B200 |
      | Driver / CUDA | 570.86 / 12.8 |
      | Clocks | GPU0 SM 1965/1965 MHz |
      | Container digest | sha256:feed |
      | Serve command | vllm serve zai-org/GLM-5.3-Flash --tensor-parallel-size 4 |
      | Server | http://127.0.0.1:8000 |
      | servegate | 0.1.0 (commit deadbeef), Node v20.19.0 |
      | Host | runner, linux x64, 64 CPUs |
      | Measured | 2025-01-01T00:00:00.000Z → 2025-01-01T01:00:00.000Z |

      </details>
      "
    `)
  })

  it('marks a concurrency whose every run is invalid as invalid, never with numbers', () => {
    const bad = point(64, [
      run(1, { ttft: [1, 2], itl: [1, 2], tput: 9999, perUser: 999, issues: [{ code: 'client_saturated', detail: 'event loop 99% busy' }] }),
    ])
    const md = renderMarkdownReport(result([c1, bad], []))
    expect(md).toContain('| 64 [1][2] | invalid | invalid | invalid | invalid |')
    expect(md).toContain(
      '1. C=64, repeat 1 is invalid and left out of the medians: the load generator was saturated (the client, not the server, was the bottleneck) — event loop 99% busy.',
    )
    expect(md).not.toContain('9,999')
  })

  it('says how many repeats are measured so far when a point is incomplete', () => {
    const md = renderMarkdownReport(result([point(1, [c1.runs[0]!])], []))
    expect(md).toContain('| 1 [1] | 100 / 110 | 20.0 / 25.0 | 48.0 | 49.8 |')
    expect(md).toContain('1. C=1: 1 of 3 repeats measured so far.')
  })
})

describe('atTargetSentence', () => {
  const t = { metric: 'tpot' as const, percentile: 95, threshold_ms: 50 }
  const runs = (bound: AtTargetRun['bound'], values: (number | null)[], conc: (number | null)[]): AtTargetRun[] =>
    values.map((v, i) => ({ repeat: i + 1, throughput: v, concurrency: conc[i] ?? null, bound }))
  const shape = (r: AtTargetRun[]) => ({ input_len: 1, output_len: 1, runs: r })

  it('calls an all-pass curve a lower bound', () => {
    expect(atTargetSentence(t, shape(runs('lower_bound', [900, 1000, 950], [64, 64, 64])), [1, 16, 64])).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: ≥ 950 tok/s (median of 3 repeats, range 900–1,000, CV 5.3%) at C ≈ 64 — lower bound: target held at every concurrency (up to C=64)',
    )
  })

  it('calls an all-fail curve unreachable and gives no number', () => {
    expect(atTargetSentence(t, shape(runs('unreachable', [null, null], [null, null])), [1, 16])).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: unreachable: even C=1 misses the target (all 2 repeats)',
    )
  })

  it('says when repeats disagree on the bound, and leaves unreachable repeats out of the median', () => {
    const mixed = [
      ...runs('interpolated', [500], [12]),
      ...runs('lower_bound', [700], [16]).map((r) => ({ ...r, repeat: 2 })),
      { repeat: 3, throughput: null, concurrency: null, bound: 'unreachable' as const },
    ]
    expect(atTargetSentence(t, shape(mixed), [1, 16])).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: 600 tok/s (median of 2 repeats, range 500–700, CV 23.6%) at C ≈ 14 — bounds differ across repeats: 1 interpolated, 1 lower bound; 1 repeat missed the target even at C=1',
    )
  })

  it('does not claim every concurrency held when the lower bound stops short of the highest', () => {
    expect(atTargetSentence(t, shape(runs('lower_bound', [500], [16])), [1, 16, 64])).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: ≥ 500 tok/s at C ≈ 16 — lower bound: target held at every concurrency, as far as measured figures reach',
    )
  })

  it('says the figure is provisional while concurrencies are pending', () => {
    expect(atTargetSentence(t, shape(runs('lower_bound', [48], [1])), [1, 16], { pending: true })).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: ≥ 48.0 tok/s at C ≈ 1 — lower bound: target held at every concurrency, as far as measured figures reach (so far: some planned runs are still pending)',
    )
  })

  it('is pending before any at-target figure exists', () => {
    expect(atTargetSentence(t, null, [1])).toBe('Throughput at p95 TPOT ≤ 50 ms: pending')
  })

  it('gives no number when no repeat has a valid run', () => {
    expect(atTargetSentence(t, shape([]), [1, 16], { invalidOnly: true })).toBe(
      'Throughput at p95 TPOT ≤ 50 ms: invalid: no repeat has a valid run (see the notes)',
    )
  })
})

describe('throughput at target with invalid runs', () => {
  it('names a repeat left without a figure because none of its runs is valid', () => {
    const bad = [{ code: 'client_saturated' as const, detail: 'ELU 0.99' }]
    const p1 = point(1, [
      run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 }),
      run(2, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8, issues: bad }),
    ])
    const p16 = point(16, [
      run(1, { ttft: [150, 300], itl: [30, 45], tput: 500, perUser: 33 }),
      run(2, { ttft: [150, 300], itl: [30, 45], tput: 500, perUser: 33, issues: bad }),
    ])
    const r = result([p1, p16], [{ input_len: 4096, output_len: 512, runs: [{ repeat: 1, throughput: 600, concurrency: 10, bound: 'interpolated' }] }])
    expect(renderConsoleTable(r)).toContain(
      'at C ≈ 10 — interpolated between the last passing and first failing concurrency (so far: some planned runs are still pending) (repeat 2 left out: no valid run)',
    )
  })
})

describe('a partial sweep', () => {
  it('says "so far" while a planned repeat is missing, even when every concurrency has some runs', () => {
    const r1 = run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 })
    const r2 = run(2, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 })
    const r3 = run(3, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 })
    const at = [
      { input_len: 4096, output_len: 512, runs: [1, 2, 3].map((repeat) => ({ repeat, throughput: 48, concurrency: 1, bound: 'lower_bound' as const })) },
    ]
    const complete = result([point(1, [r1, r2, r3])], at, [1])
    const cut = result([point(1, [r1, r2])], at, [1])
    expect(renderConsoleTable(complete)).not.toContain('so far')
    expect(renderConsoleTable(cut)).toContain('(so far: some planned runs are still pending)')
  })
})
