import { describe, expect, it } from 'vitest'
import { buildReportModel } from '../../src/report/model.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { point, result, run } from '../report/fixtures.js'

// Issue 5, item 7: invalid runs are shown as such with the reason in plain
// words, and token observations that are not faults (multi-token chunks) are
// reported beside the table, never hidden.
describe('validity in the report', () => {
  const base = { ttft: [100, 130] as [number, number], itl: [20, 25] as [number, number], tput: 500, perUser: 50 }
  const saturated = run(2, {
    ...base,
    issues: [{ code: 'client_saturated', detail: 'The load generator could not keep up: event-loop delay p99 was 12.3 ms (limit 5 ms).' }],
  })
  const speculative = run(1, base)
  speculative.tokens = {
    expected: 6144,
    server_usage: 6144,
    client_chunks: 1536,
    retokenized: 6144,
    tokens_per_chunk: 4,
    prompt_expected: 12 * 4096,
    prompt_server_usage: 12 * 4096,
  }
  const model = buildReportModel(result([point(16, [speculative, saturated, run(3, base)])], [], [16]))
  const notes = model.shapes[0]!.notes

  it('names the invalid run, says it is left out, and gives the reason with its figures', () => {
    expect(notes).toContain(
      'C=16, repeat 2 is invalid and left out of the medians: the load generator was saturated (the client, not the server, was the bottleneck) — The load generator could not keep up: event-loop delay p99 was 12.3 ms (limit 5 ms).',
    )
  })

  it('reports multi-token chunks as a note, not as an invalid run', () => {
    expect(notes).toContain(
      "C=16, repeat 1: Chunks carried 4.00 tokens on average (6144 tokens in 1536 chunks), as with speculative decoding; itl_ms is per chunk and itl_per_token_ms divides each gap by the request's mean tokens per chunk (a stream does not say how many tokens each chunk held).",
    )
    expect(model.shapes[0]!.rows[0]!.cells[0]).toBe('16 [1][2]')
  })

  it('carries both notes into the markdown', () => {
    const md = renderMarkdownReport(result([point(16, [speculative, saturated, run(3, base)])], [], [16]))
    expect(md).toMatch(/Chunks carried 4\.00 tokens on average/)
    expect(md).toMatch(/repeat 2 is invalid/)
  })
})
