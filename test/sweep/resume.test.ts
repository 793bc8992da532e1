import { describe, expect, it } from 'vitest'
import { configForResult, resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'
import { serverHostOf } from '../../src/env/local-host.js'
import { checkResumable, planKey, type ResumeNow } from '../../src/sweep/resume.js'
import { RESULT_SCHEMA, type ResultFile } from '../../src/types.js'
import { ENV, run } from '../report/fixtures.js'

const FLAGS: RunFlags = { baseUrl: 'http://127.0.0.1:8000', inputLen: '4096', outputLen: '512', concurrency: '1,16', repeats: '2', out: 'r.json' }
const cfgOf = (flags: RunFlags = {}) => resolveConfig({ file: null, filePath: null, flags: { ...FLAGS, ...flags }, env: {} })

/** A result measured with FLAGS: C=1 repeats 1 and 2 finished. */
function measured(): ResultFile {
  const f = { ttft: [100, 120] as [number, number], itl: [10, 12] as [number, number], tput: 100, perUser: 95 }
  return {
    schema: RESULT_SCHEMA,
    harness: { name: 'servegate', version: '0.1.0' },
    env: structuredClone(ENV),
    config: { ...configForResult(cfgOf()), model: 'zai-org/GLM-5.3-Flash' },
    target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
    points: [{ input_len: 4096, output_len: 512, concurrency: 1, runs: [run(1, f), run(2, f)] }],
    at_target: [],
  }
}
const sameNow: ResumeNow = { model: 'zai-org/GLM-5.3-Flash', env: ENV }
const problemsOf = (fn: () => void): string => {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError)
    return (err as Error).message
  }
  return ''
}

describe('planKey', () => {
  it('names a run by shape, concurrency and repeat', () => {
    expect(planKey(4096, 512, 16, 2)).toBe('4096x512@c16#r2')
  })
})

describe('checkResumable', () => {
  it('accepts the same settings on the same engine, and a sweep that grew (more concurrencies and repeats)', () => {
    expect(() => checkResumable(measured(), cfgOf(), 'r.json', sameNow)).not.toThrow()
    expect(() => checkResumable(measured(), cfgOf({ concurrency: '1,16,64', repeats: '3' }), 'r.json', sameNow)).not.toThrow()
  })

  it.each([
    [{ target: 'tpot:p95:30' }, 'target tpot:p95:50 in the file, tpot:p95:30 now'],
    [{ promptsPerConcurrency: '6' }, 'prompts_per_concurrency 12 in the file, 6 now'],
    [{ warmup: '2' }, 'warmup "auto" in the file, 2 now'],
    [{ seed: '9' }, 'seed 42 in the file, 9 now'],
    [{ api: 'chat' }, 'api "completions" in the file, "chat" now'],
    [{ concurrency: '16' }, 'point 4096x512 at C=1 is not in the current sweep'],
    [{ outputLen: '256' }, 'point 4096x512 at C=1 is not in the current sweep'],
    [{ repeats: '1' }, 'point 4096x512 at C=1 has repeat 2 in the file, only 1 repeat(s) now'],
  ] as [RunFlags, string][])('refuses changed settings %j, naming the difference', (flags, message) => {
    const msg = problemsOf(() => checkResumable(measured(), cfgOf(flags), 'r.json', sameNow))
    expect(msg).toContain('Cannot resume r.json: it was measured with other settings:')
    expect(msg).toContain(message)
  })

  it.each([
    [{ model: 'other/model' }, 'model "zai-org/GLM-5.3-Flash" in the file, "other/model" now'],
    [{ env: { ...ENV, engine: { name: 'vllm', version: '0.11.1' } } }, 'engine "vllm 0.11.0" in the file, "vllm 0.11.1" now'],
    [{ env: { ...ENV, model: { ...ENV.model, revision: 'def456' } } }, 'model revision "abc123" in the file, "def456" now'],
    [{ env: { ...ENV, gpu: { ...ENV.gpu, names: ['NVIDIA H100'] } } }, 'GPUs'],
    [{ env: { ...ENV, gpu: { ...ENV.gpu, driver_version: '575.1' } } }, 'GPU driver "570.86" in the file, "575.1" now'],
    [{ env: { ...ENV, container_digest: 'sha256:beef' } }, 'container digest "sha256:feed" in the file, "sha256:beef" now'],
  ] as [ResumeNow, string][])('refuses a different server or environment %#, naming it', (now, message) => {
    expect(problemsOf(() => checkResumable(measured(), cfgOf(), 'r.json', { ...sameNow, ...now }))).toContain(message)
  })

  it('refuses to mix chat prompts calibrated with /tokenize and uncalibrated ones, and skips files that predate the record', () => {
    const file = measured()
    file.config.prompt_calibration = 'tokenize'
    expect(problemsOf(() => checkResumable(file, cfgOf(), 'r.json', { ...sameNow, promptCalibration: 'none' }))).toContain(
      'prompt_calibration "tokenize" in the file, "none" now',
    )
    expect(() => checkResumable(file, cfgOf(), 'r.json', { ...sameNow, promptCalibration: 'tokenize' })).not.toThrow()
    expect(() => checkResumable(measured(), cfgOf(), 'r.json', { ...sameNow, promptCalibration: 'none' })).not.toThrow()
  })

  it('refuses to resume on another serving machine, and skips files that predate the record', () => {
    const machine = { hostname: 'gpu-1', machine_id_sha256: '5e8a1f0c3b2d4e6f', platform: 'linux x64 6.8.0-45-generic', cpu_model: 'AMD EPYC 9654', cpus: 64 }
    const file = measured()
    file.env.server_host = serverHostOf(true, machine, [])
    const elsewhere = { ...ENV, server_host: serverHostOf(true, { ...machine, hostname: 'gpu-2', machine_id_sha256: '0b7e5a643f2a9c1d' }, []) }
    const msg = problemsOf(() => checkResumable(file, cfgOf(), 'r.json', { ...sameNow, env: elsewhere }))
    expect(msg).toContain('serving machine (host name) "gpu-1" in the file, "gpu-2" now')
    expect(msg).toContain('serving machine (machine id hash) "5e8a1f0c3b2d4e6f" in the file, "0b7e5a643f2a9c1d" now')
    expect(() => checkResumable(file, cfgOf(), 'r.json', { ...sameNow, env: { ...ENV, server_host: file.env.server_host } })).not.toThrow()
    expect(() => checkResumable(measured(), cfgOf(), 'r.json', { ...sameNow, env: elsewhere })).not.toThrow()
  })

  it('does not compare a container digest that one side does not know', () => {
    expect(() => checkResumable(measured(), cfgOf(), 'r.json', { ...sameNow, env: { ...ENV, container_digest: 'unknown' } })).not.toThrow()
  })

  it("compares the seed only when it is pinned now (an unpinned resume keeps the file's seed)", () => {
    expect(cfgOf().seedPinned).toBe(false)
    const file = measured()
    file.config.seed = 987654
    expect(() => checkResumable(file, cfgOf(), 'r.json', sameNow)).not.toThrow()
    expect(problemsOf(() => checkResumable(file, cfgOf({ seed: '42' }), 'r.json', sameNow))).toContain('seed 987654 in the file, 42 now')
  })

  it('lists every difference at once', () => {
    const msg = problemsOf(() => checkResumable(measured(), cfgOf({ seed: '9', warmup: '2' }), 'r.json', { ...sameNow, model: 'x' }))
    expect(msg.split('\n').slice(1)).toHaveLength(3)
  })
})
