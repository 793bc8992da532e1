import { describe, expect, it } from 'vitest'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { problemOf } from '../fixtures/usage-error.js'

const file = (text: string) => parseConfigText(text, 'sg.yaml')
const resolve = (flags: RunFlags, text: string | null = null, env: NodeJS.ProcessEnv = {}) =>
  resolveConfig({ file: text === null ? null : file(text), filePath: text === null ? null : 'sg.yaml', flags, env })

describe('the serve settings (--serve, server.command)', () => {
  it('leaves serve null without a command: the base URL or the simulator, as before', () => {
    expect(resolve({}).serve).toBeNull()
    expect(resolve({ baseUrl: 'http://gpu:8000' }).serve).toBeNull()
  })

  it('takes --serve with {port}: no base URL (it follows the port), generous defaults, the command recorded', () => {
    const cfg = resolve({ serve: 'vllm serve m --port {port}' })
    expect(cfg.server.baseUrl).toBeNull()
    expect(cfg.serve).toEqual({ command: 'vllm serve m --port {port}', readyTimeoutS: 1800, stopTimeoutS: 30, stopCommand: null, secrets: [] })
    expect(cfg.serveCommand).toBe('vllm serve m --port {port}')
    expect(configForResult(cfg).serve_command).toBe('vllm serve m --port {port}')
  })

  it('reads server.command, ready_timeout, stop_timeout and stop_command from the file; --ready-timeout overrides', () => {
    const text = `server: {command: "docker run --name b img --port 8000", base_url: "http://127.0.0.1:8000", ready_timeout: 600, stop_timeout: 10, stop_command: "docker stop b"}`
    expect(resolve({}, text).serve).toMatchObject({
      command: 'docker run --name b img --port 8000',
      readyTimeoutS: 600,
      stopTimeoutS: 10,
      stopCommand: 'docker stop b',
    })
    expect(resolve({}, text).server.baseUrl).toBe('http://127.0.0.1:8000')
    expect(resolve({ readyTimeout: '90' }, text).serve?.readyTimeoutS).toBe(90)
  })

  it('lets --serve with {port} replace the base URL of the config file', () => {
    expect(resolve({ serve: 'x --port {port}' }, 'server: {base_url: "http://gpu:8000"}').server.baseUrl).toBeNull()
  })

  it.each([
    [
      { serve: 'x --port {port}', baseUrl: 'http://gpu:8000' },
      null,
      '--serve has {port}, so the base URL follows the port servegate picks; drop --base-url (or give the command a fixed port instead of {port})',
    ],
    [
      {},
      'server: {command: "x --port {port}", base_url: "http://gpu:8000"}',
      'sg.yaml: server.command has {port}, so the base URL follows the port servegate picks; drop server.base_url (or give the command a fixed port instead of {port})',
    ],
    [{ serve: 'vllm serve m' }, null, '--serve: expected {port} where the command takes its port (e.g. --port {port}), or a --base-url where it will answer'],
    [{ serve: 'x {port}', readyTimeout: '0' }, null, '--ready-timeout "0": expected a positive integer'],
    [{ serve: ' ' }, null, '--serve "": expected a non-empty value'],
  ] as const)('refuses %j %s with one line', (flags, text, message) => {
    expect(problemOf(() => resolve({ ...flags }, text))).toBe(message)
  })

  it('names the file and field of a bad server key', () => {
    expect(problemOf(() => resolve({}, 'server: {ready_timeout: -1}'))).toContain('server.ready_timeout: expected seconds (a positive number)')
  })

  it('redacts the recorded command, and collects the values a secret flag takes from a variable', () => {
    const cfg = resolve({ serve: 'HF_TOKEN=hf_abcdefghijklmnop vllm serve m --api-key $VLLM_KEY --port {port}' }, null, { VLLM_KEY: 'opaque-value-1' })
    expect(cfg.serveCommand).toBe('HF_TOKEN=*** vllm serve m --api-key *** --port {port}')
    expect(cfg.serve?.secrets).toContain('opaque-value-1')
    // The command to run keeps its secrets: the shell needs them.
    expect(cfg.serve?.command).toContain('hf_abcdefghijklmnop')
  })

  it('keeps --serve-command (record only) as the recorded command when both are given', () => {
    expect(resolve({ serve: 'x --port {port}', serveCommand: 'vllm serve m' }).serveCommand).toBe('vllm serve m')
  })
})
