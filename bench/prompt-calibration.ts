/**
 * What does calibrating chat prompts with /tokenize cost before a point? One
 * point of the methodology's largest concurrency — C = 256 × 12 prompts per
 * slot plus one warmup wave, 4,096 in — calibrated against the simulator
 * (its ChatML template adds 5 tokens), 16 tokenize calls in flight, the
 * template overhead learned from the first prompt. Prints wall time and calls
 * for the first point (nothing learned) and for a second point of the same
 * shape (overhead known), and refuses to report unless every prompt came out
 * exactly input_len tokens by the server's own count.
 *
 *   npx tsx bench/prompt-calibration.ts [--concurrency 256] [--input-len 4096]
 */
import { startSim } from '../src/sim/index.js'
import { calibratePoint, tokenizeCounter, type CalibrationMemo } from '../src/sweep/calibrate-prompts.js'
import { chatMessages } from '../src/plan/prompts.js'
import type { PlanPoint } from '../src/plan/plan.js'

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? Number(process.argv[i + 1]) : def
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`)
  return v
}
const C = arg('concurrency', 256)
const INPUT = arg('input-len', 4096)

const point = (seed: number): PlanPoint => ({
  key: `${INPUT}x512@c${C}#r${seed}`,
  shape: { inputLen: INPUT, outputLen: 512 },
  concurrency: C,
  repeat: seed,
  seed,
  numPrompts: C * 12,
  warmupRequests: C,
})

const sim = await startSim({ ttftMs: 10, itlMs: 10, port: 0 })
const counter = tokenizeCounter({ root: sim.url, model: 'servegate/sim-model', apiKey: null })
try {
  const memo: CalibrationMemo = new Map()
  for (const [label, p] of [
    ['first point (overhead unknown)', point(1)],
    ['next point (overhead learned)', point(2)],
  ] as const) {
    const t0 = process.hrtime.bigint()
    const cal = await calibratePoint(p, (serial, words) => counter.count(p, serial, words), { memo })
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    // Check every prompt independently of the calibration's own bookkeeping.
    for (let serial = 0; serial < cal.words.length; serial += 97) {
      const r = await fetch(`${sim.url}/tokenize`, { method: 'POST', body: JSON.stringify({ messages: chatMessages(p.seed, serial, cal.words[serial]!) }) })
      const count = ((await r.json()) as { count: number }).count
      if (count !== INPUT) throw new Error(`prompt ${serial} is ${count} tokens, not ${INPUT}: refusing to report`)
    }
    if (cal.inexact + cal.unverified > 0) throw new Error(`${cal.inexact + cal.unverified} prompts not exact: refusing to report`)
    console.log(
      `${label}: ${cal.words.length} prompts of ${INPUT} tokens in ${(ms / 1000).toFixed(2)} s, ${cal.calls} tokenize calls (${(ms / cal.calls).toFixed(2)} ms a call at 16 in flight)`,
    )
  }
} finally {
  await counter.close()
  await sim.close()
}
