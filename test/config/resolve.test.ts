import { describe, expect, it } from 'vitest'
import { DEFAULTS } from '../../src/config/defaults.js'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, requestDeadlineMs, resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { parseTarget } from '../../src/config/flags.js'
import { problemOf } from '../fixtures/usage-error.js'

const FILE = parseConfigText(
  `
server: {base_url: "http://gpu-box:8000/v1/", model: m, api_key_env: SG_KEY}
target: {metric: itl, percentile: 99, threshold_ms: 30}
seed: 9
sweeps:
  full:
    shapes: [{input_len: 4096, output_len: 512}, {input_len: 1024, output_len: 128}]
    concurrency: [64, 1, 16]
    prompts_per_concurrency: 10
    warmup: 16
    repeats: 2
  gate:
    shapes: [{input_len: 4096, output_len: 512}]
    concurrency: [1, 16]
gate: {tolerance_pct: {itl: 5, throughput: 3}, max_failed_requests: 0}
`,
  'sg.yaml',
)

const resolve = (flags: RunFlags, file = FILE as typeof FILE | null, env: NodeJS.ProcessEnv = { SG_KEY: 'sk-secret' }) =>
  resolveConfig({ file, filePath: file ? 'sg.yaml' : null, flags, env })

describe('resolveConfig', () => {
  it('uses the documented defaults when nothing is given', () => {
    const cfg = resolve({}, null, {})
    expect(cfg).toMatchObject({
      configPath: null,
      server: { baseUrl: null, model: null, api: 'completions', apiKeyEnv: null },
      apiKey: null,
      target: { metric: 'tpot', percentile: 95, thresholdMs: 50 },
      sweepName: 'default',
      shapes: [{ inputLen: 128, outputLen: 32 }],
      concurrency: [1, 4, 16],
      promptsPerConcurrency: 12,
      warmup: 'auto',
      repeats: 3,
      seed: 42,
      seedPinned: false,
      out: 'servegate-result.json',
      resume: false,
      workers: 'auto',
      containerDigest: null,
      serveCommand: null,
      idleTimeoutMs: DEFAULTS.idleTimeoutMs,
      requestTimeoutS: null,
      gate: { tolerancePct: {}, maxFailedRequests: null },
    })
  })

  it('takes the request deadline from --request-timeout, else server.request_timeout, else each shape', () => {
    const file = parseConfigText('server: {request_timeout: 900}\n', 'sg.yaml')
    expect(resolve({}, file, {}).requestTimeoutS).toBe(900)
    expect(resolve({ requestTimeout: '2.5' }, file, {}).requestTimeoutS).toBe(2.5)
    const derived = resolve({}, null, {})
    expect(requestDeadlineMs(derived, { inputLen: 4096, outputLen: 512 })).toBe(252_096)
    expect(requestDeadlineMs(resolve({ requestTimeout: '30' }, null, {}), { inputLen: 4096, outputLen: 512 })).toBe(30_000)
  })

  it.each(['0', '-1', 'ten', '1e3', '604801'])('rejects --request-timeout %j, naming the flag and the range', (raw) => {
    expect(problemOf(() => resolve({ requestTimeout: raw }, null, {}))).toBe(
      `--request-timeout "${raw}": expected a number of seconds above 0 (at most 604800), e.g. 600`,
    )
  })

  it('rejects a server.request_timeout that is not a positive number of seconds', () => {
    expect(() => parseConfigText('server: {request_timeout: "10m"}\n', 'sg.yaml')).toThrow(
      'server.request_timeout: expected a number of seconds above 0, e.g. 600',
    )
    expect(() => parseConfigText('server: {request_timeout: 0}\n', 'sg.yaml')).toThrow('server.request_timeout: expected a number of seconds above 0, e.g. 600')
  })

  it("takes the file's `full` sweep when no --sweep is given, concurrencies ascending", () => {
    const cfg = resolve({})
    expect(cfg.sweepName).toBe('full')
    expect(cfg.concurrency).toEqual([1, 16, 64])
    expect(cfg.shapes).toEqual([
      { inputLen: 4096, outputLen: 512 },
      { inputLen: 1024, outputLen: 128 },
    ])
    expect([cfg.promptsPerConcurrency, cfg.warmup, cfg.repeats, cfg.seed, cfg.seedPinned]).toEqual([10, 16, 2, 9, true])
    expect(cfg.target).toEqual({ metric: 'itl', percentile: 99, thresholdMs: 30 })
    expect(cfg.server).toEqual({ baseUrl: 'http://gpu-box:8000', model: 'm', api: 'completions', apiKeyEnv: 'SG_KEY' })
    expect(cfg.apiKey).toBe('sk-secret')
    expect(cfg.gate).toEqual({ tolerancePct: { itl: 5, throughput: 3 }, maxFailedRequests: 0 })
  })

  it('picks a named sweep and fills what it leaves out with defaults', () => {
    const cfg = resolve({ sweep: 'gate' })
    expect(cfg).toMatchObject({ sweepName: 'gate', concurrency: [1, 16], promptsPerConcurrency: 12, warmup: 'auto', repeats: 3 })
  })

  it("takes a file's only sweep even when it is not called full", () => {
    const file = parseConfigText('sweeps:\n  quick:\n    shapes: [{input_len: 8, output_len: 4}]\n    concurrency: [2]\n', 'q.yaml')
    expect(resolve({}, file).sweepName).toBe('quick')
  })

  it('asks for --sweep when a file has several sweeps and none is full', () => {
    const file = parseConfigText(
      'sweeps:\n  a: {shapes: [{input_len: 8, output_len: 4}], concurrency: [2]}\n  b: {shapes: [{input_len: 8, output_len: 4}], concurrency: [2]}\n',
      'two.yaml',
    )
    expect(problemOf(() => resolve({}, file))).toBe('sg.yaml has several sweeps (a, b) and none is named "full": choose one with --sweep NAME')
  })

  it('lists the sweep names when --sweep names none of them', () => {
    expect(problemOf(() => resolve({ sweep: 'nightly' }))).toBe('--sweep "nightly": sg.yaml has no sweep of that name; its sweeps are: full, gate')
  })

  it('refuses --sweep without a config file', () => {
    expect(problemOf(() => resolve({ sweep: 'gate' }, null))).toMatch(/^--sweep "gate": named sweeps come from a config file/)
  })

  it('lets flags override the file', () => {
    const cfg = resolve({
      baseUrl: 'http://127.0.0.1:9000',
      model: 'other',
      api: 'chat',
      concurrency: '8,2',
      promptsPerConcurrency: '5',
      warmup: '0',
      repeats: '1',
      target: 'tpot:p99:40',
      seed: '123',
      out: 'x.json',
      resume: true,
      workers: '3',
      timeoutMs: '5000',
      serveCommand: 'vllm serve m',
    })
    expect(cfg).toMatchObject({
      server: { baseUrl: 'http://127.0.0.1:9000', model: 'other', api: 'chat' },
      concurrency: [2, 8],
      promptsPerConcurrency: 5,
      warmup: 0,
      repeats: 1,
      target: { metric: 'tpot', percentile: 99, thresholdMs: 40 },
      seed: 123,
      seedPinned: true,
      out: 'x.json',
      resume: true,
      workers: 3,
      idleTimeoutMs: 5000,
      serveCommand: 'vllm serve m',
    })
  })

  it('applies --output-len to every shape of the sweep and drops shapes that become equal', () => {
    expect(resolve({ outputLen: '64' }).shapes).toEqual([
      { inputLen: 4096, outputLen: 64 },
      { inputLen: 1024, outputLen: 64 },
    ])
    expect(resolve({ inputLen: '10', outputLen: '5' }).shapes).toEqual([{ inputLen: 10, outputLen: 5 }])
  })

  it.each([
    [{ concurrency: '1,4,x' }, '--concurrency "1,4,x": expected positive integers separated by commas, e.g. 1,4,16'],
    [{ concurrency: '1,0' }, '--concurrency "1,0": expected positive integers separated by commas, e.g. 1,4,16'],
    [{ concurrency: '4,4' }, '--concurrency "4,4": expected each concurrency once (duplicates found)'],
    [{ inputLen: '12.5' }, '--input-len "12.5": expected a positive integer'],
    [{ outputLen: '0' }, '--output-len "0": expected a positive integer'],
    [{ warmup: '-1' }, '--warmup "-1": expected a non-negative integer (requests per point) or "auto"'],
    [{ workers: 'many' }, '--workers "many": expected a positive integer or "auto"'],
    [{ api: 'grpc' }, '--api "grpc": expected "completions" or "chat"'],
    [{ target: 'ttft:p95:50' }, '--target "ttft:p95:50": expected METRIC:pPERCENTILE:MS with METRIC tpot or itl, e.g. tpot:p95:50'],
    [{ target: 'tpot:p100:50' }, '--target "tpot:p100:50": expected percentile p50, p95 or p99 (the ones every run records), e.g. tpot:p95:50'],
    [{ target: 'tpot:p90:50' }, '--target "tpot:p90:50": expected percentile p50, p95 or p99 (the ones every run records), e.g. tpot:p95:50'],
    [{ seed: '4294967296' }, '--seed "4294967296": expected an integer from 0 to 4294967295'],
    [{ baseUrl: 'localhost:8000' }, '--base-url "localhost:8000": expected an http(s) URL, not localhost:'],
    [
      { baseUrl: 'http://u:p@host:8000' },
      '--base-url "http://***@host:8000": expected a URL without credentials (name the key\'s environment variable in server.api_key_env)',
    ],
  ] as [RunFlags, string][])('rejects %o with a specific message', (flags, message) => {
    expect(problemOf(() => resolve(flags, null, {}))).toBe(message)
  })

  it('reports every bad flag at once', () => {
    expect(problemOf(() => resolve({ repeats: 'three', concurrency: 'a' }, null, {}))).toBe(
      'invalid options:\n  --concurrency "a": expected positive integers separated by commas, e.g. 1,4,16\n  --repeats "three": expected a positive integer',
    )
  })

  it('requires the API key variable the file names when a server is given', () => {
    expect(problemOf(() => resolve({}, FILE, {}))).toBe('sg.yaml: server.api_key_env names SG_KEY, which is not set in the environment')
  })

  it('takes the container digest from SERVEGATE_CONTAINER_DIGEST unless the flag gives one', () => {
    const env = { SG_KEY: 'k', SERVEGATE_CONTAINER_DIGEST: 'sha256:aaa' }
    expect(resolve({}, FILE, env).containerDigest).toBe('sha256:aaa')
    expect(resolve({ containerDigest: 'sha256:bbb' }, FILE, env).containerDigest).toBe('sha256:bbb')
  })
})

describe('configForResult', () => {
  it('records the resolved settings in snake_case and never the API key', () => {
    const cfg = resolve({ sweep: 'gate' })
    const rec = configForResult(cfg)
    expect(JSON.stringify(rec)).not.toContain('sk-secret')
    expect(rec).toMatchObject({
      config_file: 'sg.yaml',
      sweep: 'gate',
      server: { base_url: 'http://gpu-box:8000', model: 'm', api: 'completions', api_key_env: 'SG_KEY' },
      target: { metric: 'itl', percentile: 99, threshold_ms: 30 },
      shapes: [{ input_len: 4096, output_len: 512 }],
      concurrency: [1, 16],
      prompts_per_concurrency: 12,
      repeats: 3,
      seed: 9,
      seed_pinned: true,
      idle_timeout_ms: 120_000,
      request_timeout_s: 120 + 4.096 + 128,
    })
  })

  it('records the request deadline as one number when the sweep shares it, else per shape', () => {
    expect(configForResult(resolve({ requestTimeout: '600' })).request_timeout_s).toBe(600)
    expect(configForResult(resolve({})).request_timeout_s).toEqual({ '4096x512': 252.096, '1024x128': 153.024 })
  })
})

describe('parseTarget', () => {
  it('accepts the percentile with or without p and a trailing ms', () => {
    expect(parseTarget('itl:99:30ms')).toEqual({ metric: 'itl', percentile: 99, thresholdMs: 30 })
    expect(parseTarget('TPOT:p50:12.5')).toEqual({ metric: 'tpot', percentile: 50, thresholdMs: 12.5 })
    expect(parseTarget('tpot:p99.9:12.5')).toMatch(/expected percentile p50, p95 or p99/)
  })
})

describe('host_retries', () => {
  it('is 0 by default, taken from the sweep, overridden by --host-retries, and recorded in the result', () => {
    expect(resolve({}, null, {}).hostRetries).toBe(0)
    const file = parseConfigText('sweeps:\n  gate:\n    shapes: [{input_len: 8, output_len: 4}]\n    concurrency: [2]\n    host_retries: 2\n', 'sg.yaml')
    expect(resolve({}, file).hostRetries).toBe(2)
    expect(resolve({ hostRetries: '0' }, file).hostRetries).toBe(0)
    expect(configForResult(resolve({ hostRetries: '3' }, file))['host_retries']).toBe(3)
  })

  it.each(['-1', '11', 'one', '1.5'])('rejects --host-retries %j, naming the flag and the range', (raw) => {
    expect(problemOf(() => resolve({ hostRetries: raw }, null, {}))).toBe(`--host-retries "${raw}": expected a count of attempts from 0 to 10`)
  })

  it('rejects a sweep host_retries outside 0 to 10, naming the file and the field', () => {
    for (const bad of ['11', '-1', '0.5', '"two"']) {
      expect(() =>
        parseConfigText(`sweeps:\n  gate:\n    shapes: [{input_len: 8, output_len: 4}]\n    concurrency: [2]\n    host_retries: ${bad}\n`, 'sg.yaml'),
      ).toThrow('sg.yaml is not a valid servegate config:\n  sweeps.gate.host_retries: expected a count of attempts from 0 to 10')
    }
  })
})

describe('gate.design_pct and gate.max_gpu_minutes', () => {
  const gateFile = (gate: string) => parseConfigText(`gate: ${gate}\n`, 'sg.yaml')

  it('resolves both as given and records them in the result, so a refresh reads back what the gate used', () => {
    const cfg = resolve({}, gateFile('{design_pct: {itl_p95: 8, tput_at_target: 12}, max_gpu_minutes: 90, max_mdc_pct: 15}'), {})
    expect(cfg.gate).toEqual({ tolerancePct: {}, maxFailedRequests: null, maxMdcPct: 15, designPct: { itl_p95: 8, tput_at_target: 12 }, maxGpuMinutes: 90 })
    expect(configForResult(cfg)['gate']).toEqual({
      tolerance_pct: {},
      max_failed_requests: null,
      max_mdc_pct: 15,
      design_pct: { itl_p95: 8, tput_at_target: 12 },
      max_gpu_minutes: 90,
    })
  })

  it('leaves both out when the file sets neither: no cap, the gate keeps its designs', () => {
    const cfg = resolve({}, gateFile('{max_failed_requests: 0}'), {})
    expect(cfg.gate).toEqual({ tolerancePct: {}, maxFailedRequests: 0 })
    expect(configForResult(cfg)['gate']).toEqual({ tolerance_pct: {}, max_failed_requests: 0 })
  })

  it.each([
    ['design_pct: {itl_p95: 0}', 'gate.design_pct.itl_p95: expected the change (%) rows of this kind are designed to catch, a number above 0, e.g. 10'],
    [
      'design_pct: {tput_at_target: "15%"}',
      'gate.design_pct.tput_at_target: expected the change (%) rows of this kind are designed to catch, a number above 0, e.g. 10',
    ],
    ['design_pct: 10', 'gate.design_pct: expected a map of metric kinds to percentages, e.g. {itl_p95: 10, tput_at_target: 15}'],
    ['max_gpu_minutes: 0', 'gate.max_gpu_minutes: expected GPU-minutes a pull request may spend, a number above 0, e.g. 120'],
    ['max_gpu_minutes: -5', 'gate.max_gpu_minutes: expected GPU-minutes a pull request may spend, a number above 0, e.g. 120'],
  ])('refuses gate: {%s}, naming the file and the field', (gate, line) => {
    expect(() => gateFile(`{${gate}}`)).toThrow(`sg.yaml is not a valid servegate config:\n  ${line}`)
  })

  it('refuses a design_pct key that is not a metric kind, listing the kinds', () => {
    expect(() => gateFile('{design_pct: {itl: 10}}')).toThrow(
      'sg.yaml is not a valid servegate config:\n  gate.design_pct.itl: unknown key (allowed here: itl_p95, tput_at_target, ttft_p95, tpot_p95, e2el_p95, req_tput, output_tput, goodput)',
    )
  })

  it('refuses a design above gate.max_mdc_pct in one line naming the file and both fields', () => {
    expect(problemOf(() => resolve({}, gateFile('{design_pct: {itl_p95: 10, tput_at_target: 20}, max_mdc_pct: 15}'), {}))).toBe(
      'sg.yaml: gate.design_pct.tput_at_target 20 exceeds gate.max_mdc_pct 15; expected a design change of at most 15 %, or a larger max_mdc_pct',
    )
    // Equal is allowed, and without max_mdc_pct any design above 0 is.
    expect(resolve({}, gateFile('{design_pct: {tput_at_target: 15}, max_mdc_pct: 15}'), {}).gate.designPct).toEqual({ tput_at_target: 15 })
    expect(resolve({}, gateFile('{design_pct: {tput_at_target: 40}}'), {}).gate.designPct).toEqual({ tput_at_target: 40 })
  })
})

describe('a sharded sweep’s settings (--shard, --start-at, --slot, --time-server, config shard:)', () => {
  const shard = { shard: 'JOB_COMPLETION_INDEX/4', startAt: '2026-12-07T10:00:00Z', slot: '90', timeServer: 'ntp.example.com' }

  it('reads the index from the variable the launcher sets, and the schedule', () => {
    expect(resolve(shard, null, { JOB_COMPLETION_INDEX: '2' }).shard).toEqual({
      index: 2,
      count: 4,
      indexFrom: 'JOB_COMPLETION_INDEX',
      startAt: '2026-12-07T10:00:00Z',
      startAtMs: Date.UTC(2026, 11, 7, 10),
      slotS: 90,
      timeServer: 'ntp.example.com',
    })
    expect(resolve({}, null, {}).shard).toBeUndefined()
  })

  it('takes the config file’s shard: with the flags winning', () => {
    const file = parseConfigText('shard: {index: SLURM_PROCID, count: 8, start_at: "2026-12-07T10:00:00Z", slot_s: 60}\n', 'sg.yaml')
    expect(resolve({ slot: '45' }, file, { SLURM_PROCID: '7' }).shard).toMatchObject({ index: 7, count: 8, slotS: 45, timeServer: null })
  })

  it('refuses a shard without its schedule, schedule flags without a shard, and what a schedule cannot keep', () => {
    expect(problemOf(() => resolve({ shard: '0/2' }, null, {}))).toBe(
      'invalid options:\n  --shard needs --start-at TIME: the same ISO 8601 time on every shard, a little in the future, where their schedule begins\n  --shard needs --slot SECONDS: how long each run is given on every shard (longer than the longest run, its warmup included)',
    )
    expect(problemOf(() => resolve({ startAt: '2026-12-07T10:00:00Z' }, null, {}))).toBe('--start-at belongs to a sharded sweep: give --shard I/N too')
    expect(problemOf(() => resolve({ ...shard, shard: '1/2', startAt: '10:00' }, null, {}))).toBe(
      '--start-at "10:00": expected an ISO 8601 time with its zone, e.g. 2026-12-07T10:00:00Z (every shard reads it alike)',
    )
    expect(problemOf(() => resolve(shard, null, {}))).toBe(
      '--shard "JOB_COMPLETION_INDEX/4": the variable JOB_COMPLETION_INDEX is not set (the launcher sets it: a Kubernetes Indexed Job, Slurm\'s srun)',
    )
    expect(problemOf(() => resolve({ ...shard, shard: '0/2', resume: true }, null, {}))).toBe(
      '--shard cannot --resume: the schedule the other shards keep has moved on; run the sharded sweep again',
    )
    expect(problemOf(() => resolve({ ...shard, shard: '0/2', serve: 'vllm serve m --port {port}' }, null, {}))).toBe(
      '--shard measures one server that the launcher started, given by --base-url: drop --serve (every shard would start a server of its own)',
    )
    expect(problemOf(() => resolve({ ...shard, shard: '0/2', requestRate: '5' }, null, {}))).toBe(
      '--shard runs closed-loop sweeps only: an open-loop sweep (--request-rate) cannot be split yet',
    )
    expect(problemOf(() => resolve({ ...shard, shard: '0/2', slot: '0' }, null, {}))).toBe(
      '--slot "0": expected seconds above 0, longer than the sweep\'s longest run',
    )
  })
})
