import { describe, expect, it } from 'vitest'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, resolveConfig } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'

const resolveText = (text: string) => resolveConfig({ file: parseConfigText(text, 'sg.yaml'), filePath: 'sg.yaml', flags: {}, env: {} })

describe('gate.reference_command (the reference engine a gate re-measures beside the candidate)', () => {
  it('is read into the gate settings and never recorded in the result (it may hold secrets)', () => {
    const cfg = resolveText('gate:\n  reference_command: "vllm serve m --port {port} --api-key sk-abcdefghijklmnop"\n')
    expect(cfg.gate.referenceCommand).toBe('vllm serve m --port {port} --api-key sk-abcdefghijklmnop')
    expect(JSON.stringify(configForResult(cfg))).not.toContain('reference')
    expect(JSON.stringify(configForResult(cfg))).not.toContain('sk-abcdefghijklmnop')
  })

  it('is absent when the config does not set it', () => {
    expect(resolveText('gate:\n  tolerance_pct: {itl: 5}\n').gate.referenceCommand).toBeUndefined()
  })

  it('rejects an empty command with the file, the key and what is expected', () => {
    let message = ''
    try {
      parseConfigText('gate:\n  reference_command: ""\n', 'sg.yaml')
    } catch (err) {
      if (!(err instanceof UsageError)) throw err
      message = err.message
    }
    expect(message).toContain('sg.yaml')
    expect(message).toContain('gate.reference_command')
    expect(message).toContain('expected a shell command line that starts the reference engine')
  })
})
