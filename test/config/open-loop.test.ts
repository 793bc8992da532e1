import { describe, expect, it } from 'vitest'
import { resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { configFileSchema } from '../../src/config/schema.js'
import { UsageError } from '../../src/errors.js'
import { buildPlan } from '../../src/plan/plan.js'

const resolve = (flags: RunFlags, file: unknown = null) =>
  resolveConfig({ file: file === null ? null : configFileSchema.parse(file), filePath: file === null ? null : 'servegate.yaml', flags, env: {} })

describe('open-loop and goodput settings', () => {
  it('sweeps --request-rate 5,10,inf as points labelled by rate, with vLLM’s defaults', () => {
    const cfg = resolve({ requestRate: '10,inf,5' })
    expect(cfg.openLoop).toEqual({ rates: [5, 10, Infinity], burstiness: 1, maxConcurrency: null, numPrompts: 1000 })
    const plan = buildPlan({ ...cfg, repeats: 1 })
    expect(plan.map((p) => p.key)).toEqual(['128x32@rate5#r1', '128x32@rate10#r1', '128x32@rateinf#r1'])
    expect(plan.every((p) => p.numPrompts === 1000 && p.concurrency === 1000)).toBe(true)
  })

  it('takes the config file’s request_rates and lets flags win', () => {
    const file = {
      sweeps: { open: { shapes: [{ input_len: 64, output_len: 16 }], request_rates: [2, 'inf'], burstiness: 0.5, max_concurrency: 8, num_prompts: 100 } },
      goodput: { ttft: 2000, tpot: 50 },
    }
    const cfg = resolve({}, file)
    expect(cfg.openLoop).toEqual({ rates: [2, Infinity], burstiness: 0.5, maxConcurrency: 8, numPrompts: 100 })
    expect(cfg.goodput).toEqual({ ttft_ms: 2000, tpot_ms: 50 })
    expect(resolve({ numPrompts: '50', goodput: 'e2el:9000' }, file)).toMatchObject({ openLoop: { numPrompts: 50 }, goodput: { e2el_ms: 9000 } })
    // --concurrency makes the same sweep closed loop.
    expect(resolve({ concurrency: '1,4' }, file)).toMatchObject({ openLoop: null, concurrency: [1, 4] })
  })

  it.each([
    [{ goodput: 'ttft:abc' }, /--goodput "ttft:abc": "ttft:abc": expected KEY:MS pairs/],
    [{ goodput: 'itl:50' }, /--goodput "itl:50": "itl:50": unknown SLO "itl"/],
    [{ goodput: 'tpot:50,tpot:40' }, /tpot given twice/],
    [{ requestRate: '5,x' }, /--request-rate "5,x": expected request rates above 0/],
    [{ requestRate: '0' }, /--request-rate "0": expected request rates above 0/],
    [{ requestRate: '5', burstiness: '-1' }, /--burstiness "-1": expected a number above 0/],
    [{ requestRate: '5', concurrency: '4' }, /--concurrency and --request-rate: choose one/],
    [{ burstiness: '2' }, /--burstiness: applies to open-loop load; add --request-rate R/],
  ] as Array<[RunFlags, RegExp]>)('refuses %o with one clear line (exit 2)', (flags, message) => {
    expect(() => resolve(flags)).toThrow(UsageError)
    expect(() => resolve(flags)).toThrow(message)
  })

  it('refuses a sweep with both concurrency and request_rates, or a goodput key it does not know', () => {
    expect(configFileSchema.safeParse({ sweeps: { s: { shapes: [{ input_len: 1, output_len: 2 }], concurrency: [1], request_rates: [1] } } }).success).toBe(
      false,
    )
    expect(configFileSchema.safeParse({ goodput: { itl: 5 } }).success).toBe(false)
    expect(configFileSchema.safeParse({ goodput: {} }).success).toBe(false)
  })
})
