import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfigFile, parseConfigText } from '../../src/config/load.js'
import { usageErrorOf } from '../fixtures/errors.js'

const EXAMPLE = `
server:
  base_url: http://127.0.0.1:8000
  model: zai-org/GLM-5.3-Flash
  api: completions
  api_key_env: OPENAI_API_KEY
target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  full:
    shapes: [{input_len: 4096, output_len: 512}]
    concurrency: [1, 4, 16, 64, 128, 256]
    prompts_per_concurrency: 12
    warmup: 16
    repeats: 3
  gate:
    shapes: [{input_len: 4096, output_len: 512}]
    concurrency: [1, 16, 64]
    repeats: 3
`

const errorOf = usageErrorOf

describe('parseConfigText', () => {
  it('accepts the example of docs/config.md and keeps every value', () => {
    const cfg = parseConfigText(EXAMPLE, 'servegate.yaml')
    expect(cfg.server).toEqual({ base_url: 'http://127.0.0.1:8000', model: 'zai-org/GLM-5.3-Flash', api: 'completions', api_key_env: 'OPENAI_API_KEY' })
    expect(cfg.target).toEqual({ metric: 'tpot', percentile: 95, threshold_ms: 50 })
    expect(cfg.sweeps?.full?.concurrency).toEqual([1, 4, 16, 64, 128, 256])
    expect(cfg.sweeps?.gate?.warmup).toBeUndefined()
  })

  it('reads JSON files as JSON', () => {
    const cfg = parseConfigText('{"seed": 7, "gate": {"tolerance_pct": {"itl": 5}, "max_failed_requests": 0}}', 'c.json')
    expect(cfg).toEqual({ seed: 7, gate: { tolerance_pct: { itl: 5 }, max_failed_requests: 0 } })
  })

  it('treats an empty YAML file as an empty config', () => {
    expect(parseConfigText('', 'empty.yaml')).toEqual({})
  })

  it('names the file, the path of an unknown key, the keys allowed there and the near miss', () => {
    const err = errorOf(() => parseConfigText('server:\n  baseUrl: http://x\n', 'my.yaml'))
    expect(err.message).toBe(
      'my.yaml is not a valid servegate config:\n  server.baseUrl: unknown key (allowed here: base_url, model, api, api_key_env, command, ready_timeout, stop_timeout, stop_command, isolation, headers, tokenizer, extra_body, request_timeout, gpus, env); did you mean "base_url"?',
    )
    expect(err.hint).toMatch(/Unknown keys are errors/)
    expect(err.hint).toContain('docs/config.md')
  })

  it.each(['ACTIONS_RUNTIME_TOKEN', 'GITHUB_TOKEN', 'INPUT_GITHUB_TOKEN', 'RUNNER_TEMP', 'actions_id_token_request_token'])(
    'refuses server.api_key_env: %s, a runner variable whose value would be sent to the server as its key',
    (name) => {
      const err = errorOf(() => parseConfigText(`server:\n  api_key_env: ${name}\n`, 'servegate.yml'))
      const prefix = name.toUpperCase().split('_')[0]
      expect(err.message).toBe(
        `servegate.yml is not a valid servegate config:\n  server.api_key_env: expected a variable that holds the server's API key; ${name} is the runner's (${prefix}_* values are never sent to a server)`,
      )
    },
  )

  it('finds unknown keys inside a named sweep', () => {
    const err = errorOf(() =>
      parseConfigText('sweeps:\n  quick:\n    shapes: [{input_len: 8, output_len: 8}]\n    concurrency: [1]\n    prompts_per_concurency: 3\n', 'c.yaml'),
    )
    expect(err.message).toContain('sweeps.quick.prompts_per_concurency: unknown key')
    expect(err.message).toContain('did you mean "prompts_per_concurrency"?')
  })

  it('reports every failing field at once, with what was expected', () => {
    const err = errorOf(() =>
      parseConfigText(
        'server: {api: grpc}\ntarget: {percentile: 100}\nsweeps:\n  full:\n    shapes: [{input_len: 0, output_len: 8}]\n    concurrency: [1, 4, x, 4]\n',
        'bad.yaml',
      ),
    )
    const lines = err.message
      .split('\n')
      .slice(1)
      .map((l) => l.trim())
    expect(lines).toEqual([
      'server.api: expected "completions" or "chat"',
      'target.percentile: expected 50, 95 or 99 (the percentiles every run records)',
      'sweeps.full.shapes[0].input_len: expected a prompt length in tokens (a positive integer)',
      'sweeps.full.concurrency[2]: expected a concurrency (a positive integer)',
    ])
  })

  it('lists the first five problems of a long list, then says how many more', () => {
    // A config written for another tool: nine keys servegate does not know.
    const keys = ['url', 'model_name', 'num_prompts', 'request_rate', 'dataset', 'tokenizer', 'backend', 'endpoint', 'seed_value']
    const err = errorOf(() => parseConfigText(keys.map((k) => `${k}: 1`).join('\n'), 'other.yaml'))
    const lines = err.message.split('\n')
    expect(lines[0]).toBe('other.yaml is not a valid servegate config:')
    expect(lines.slice(1, 6).map((l) => l.trim().split(':')[0])).toEqual(keys.slice(0, 5))
    expect(lines.slice(6)).toEqual(['  … and 4 more'])
  })

  it('names the rule for a bad sweep name, and still says what sweeps must be', () => {
    const bad = errorOf(() => parseConfigText('sweeps:\n  "bad name":\n    concurrency: [1]\n', 'c.yaml'))
    expect(bad.message).toContain('sweeps.bad name: expected a sweep name of letters, digits, "_", "-" or "."')
    const notMap = errorOf(() => parseConfigText('sweeps: [1, 2]\n', 'c.yaml'))
    expect(notMap.message).toContain('sweeps: expected a map of sweep names to sweeps')
  })

  it('rejects a repeated concurrency', () => {
    const err = errorOf(() => parseConfigText('sweeps:\n  full:\n    shapes: [{input_len: 8, output_len: 8}]\n    concurrency: [4, 4]\n', 'c.yaml'))
    expect(err.message).toContain('sweeps.full.concurrency: expected each concurrency once (duplicates found)')
  })

  it('says which file is not valid YAML', () => {
    const err = errorOf(() => parseConfigText('server: [unclosed', 'broken.yaml'))
    expect(err.message).toMatch(/^broken\.yaml is not valid YAML: /)
  })
})

describe('loadConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-config-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('reads and validates a file from disk', async () => {
    const path = join(dir, 'ok.yaml')
    writeFileSync(path, EXAMPLE)
    expect((await loadConfigFile(path)).sweeps?.gate?.concurrency).toEqual([1, 16, 64])
  })

  it('names a file it cannot read', async () => {
    const path = join(dir, 'missing.yaml')
    await expect(loadConfigFile(path)).rejects.toThrow(`cannot read config file ${path}`)
  })
})
