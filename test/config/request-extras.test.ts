import { describe, expect, it } from 'vitest'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { problemOf } from '../fixtures/usage-error.js'
import { diffFingerprint, fingerprintOf } from '../../src/gate/fingerprint.js'
import { pipelineResult } from '../gate/fixtures.js'

// --header / --extra-body and server.headers / server.extra_body: what a deployment needs on every
// request, never what the methodology pins; header values are secrets.
const file = (server: string) =>
  parseConfigText(
    `server: {base_url: "http://gpu-box:8000", ${server}}
sweeps: {gate: {shapes: [{input_len: 32, output_len: 8}], concurrency: [1]}}
`,
    'sg.yaml',
  )

const resolve = (flags: RunFlags, server = '') => resolveConfig({ file: file(server), filePath: 'sg.yaml', flags, env: {} })

describe('request extras', () => {
  it('merges the file’s headers and body with the flags’, the flags winning per name (case-blind) and per field', () => {
    const cfg = resolve(
      { header: ['X-Route:green', 'x-tenant: team-a:eu'], extraBody: '{"min_tokens": 8, "chat_template_kwargs": {"enable_thinking": false}}' },
      'headers: {x-route: blue}, extra_body: {min_tokens: 4, priority: 1}',
    )
    expect(cfg.request).toEqual({
      headers: { 'X-Route': 'green', 'x-tenant': 'team-a:eu' },
      extraBody: { min_tokens: 8, priority: 1, chat_template_kwargs: { enable_thinking: false } },
    })
    // The values are secrets: the one redaction of the process knows them.
    expect(cfg.secrets).toEqual(expect.arrayContaining(['green', 'team-a:eu']))
  })

  it('records the header names with their values redacted, and the extra body; nothing when none is set', () => {
    const cfg = resolve({ header: ['x-route: sk-route-0123456789'], extraBody: '{"min_tokens": 8}' })
    const server = configForResult(cfg)['server'] as Record<string, unknown>
    expect(server['headers']).toEqual({ 'x-route': '<redacted>' })
    expect(server['extra_body']).toEqual({ min_tokens: 8 })
    expect(JSON.stringify(configForResult(cfg))).not.toContain('sk-route-0123456789')
    const plain = configForResult(resolve({}))['server'] as Record<string, unknown>
    expect(plain).not.toHaveProperty('headers')
    expect(plain).not.toHaveProperty('extra_body')
  })

  it('refuses what the methodology pins, naming the flag or the file’s field and why', () => {
    expect(problemOf(() => resolve({ extraBody: '{"max_tokens": 10}' }))).toBe(
      '--extra-body max_tokens: servegate pins max_tokens (the shape’s output_len); an extra body may add fields, never change these',
    )
    expect(problemOf(() => resolve({}, 'extra_body: {ignore_eos: false}'))).toBe(
      'sg.yaml: server.extra_body.ignore_eos: servegate pins ignore_eos (every request generates exactly output_len tokens); an extra body may add fields, never change these',
    )
    const many = problemOf(() => resolve({ extraBody: '{"stream": false, "temperature": 0.7, "n": 2, "messages": [], "stream_options": {}}' }))
    for (const key of ['stream', 'temperature', 'n', 'messages', 'stream_options']) expect(many).toContain(`--extra-body ${key}: servegate pins ${key}`)
  })

  it('refuses the headers servegate sets itself, a malformed header and a body that is not a JSON object, never echoing a value', () => {
    expect(problemOf(() => resolve({ header: ['Authorization: Bearer sk-abc'] }))).toBe(
      '--header Authorization: servegate sets authorization itself (the key comes from server.api_key_env)',
    )
    expect(problemOf(() => resolve({}, 'headers: {x-request-id: abc}'))).toBe(
      'sg.yaml: server.headers.x-request-id: servegate sets x-request-id itself (servegate names each request with it)',
    )
    const bad = problemOf(() => resolve({ header: ['sk-secret-token'] }))
    expect(bad).toBe('--header "…": expected NAME:VALUE, e.g. --header x-route:blue')
    expect(problemOf(() => resolve({ header: ['bad name: v'] }))).toMatch(/^--header bad name: expected a header name/)
    expect(problemOf(() => resolve({ extraBody: '[1]' }))).toBe('--extra-body: expected a JSON object, e.g. \'{"min_tokens": 128}\'')
    expect(problemOf(() => resolve({ extraBody: '{min_tokens: 1}' }))).toMatch(/^--extra-body: expected a JSON object, e\.g\. .*\(/)
  })
})

describe('request extras in the fingerprint', () => {
  const withServer = (server: Record<string, unknown>) => {
    const r = pipelineResult({ concurrency: [1], repeats: 1, itl: () => 10 })
    r.config = { ...r.config, server: { ...(r.config['server'] as Record<string, unknown>), ...server } }
    return r
  }

  it('tells results whose requests carried other extras apart, and reads the same fields in any order alike', () => {
    const none = fingerprintOf(withServer({}))
    const a = fingerprintOf(withServer({ headers: { 'x-route': '<redacted>' }, extra_body: { min_tokens: 8, priority: 1 } }))
    const b = fingerprintOf(withServer({ extra_body: { priority: 1, min_tokens: 8 }, headers: { 'x-route': '<redacted>' } }))
    expect(none.request_extras).toBe('none')
    expect(a.request_extras).toBe('headers x-route; extra_body {"min_tokens":8,"priority":1}')
    expect(diffFingerprint(a, b)).toEqual([])
    expect(diffFingerprint(none, a)).toEqual([{ field: 'request extras', baseline: 'none', candidate: a.request_extras }])
  })

  it('reads a stored fingerprint from before extras existed as none', () => {
    const old = fingerprintOf(withServer({}))
    delete old.request_extras
    const withBody = fingerprintOf(withServer({ extra_body: { min_tokens: 8 } }))
    expect(diffFingerprint(old, fingerprintOf(withServer({})))).toEqual([])
    expect(diffFingerprint(old, withBody).map((d) => d.field)).toEqual(['request extras'])
  })
})
