import { describe, expect, it } from 'vitest'
import { withDeclaredGpus } from '../../src/env/collect.js'
import { resolveConfig } from '../../src/config/resolve.js'

const seen = { names: Array.from({ length: 8 }, () => 'NVIDIA H100'), count: 8 as number | 'unknown', driver_version: '570', cuda_version: '12.8', clocks: 'x' }

describe('the GPU count a result records', () => {
  it("keeps nvidia-smi's count when none is declared", () => {
    expect(withDeclaredGpus(seen, null)).toEqual({ gpu: seen, warning: null })
  })
  it('records the declared count over the host-wide one, with a warning naming both', () => {
    const r = withDeclaredGpus(seen, 2)
    expect(r.gpu.count).toBe(2)
    expect(r.gpu.names).toHaveLength(8)
    expect(r.warning).toMatch(/--gpus 2 differs from the 8 GPUs nvidia-smi sees/)
  })
  it('records the declared count without a warning when nvidia-smi sees none (a remote server)', () => {
    expect(withDeclaredGpus({ ...seen, names: [], count: 'unknown' }, 4)).toMatchObject({ gpu: { count: 4 }, warning: null })
  })
  it('takes --gpus over server.gpus and refuses a count that is not a positive integer', () => {
    const file = { server: { gpus: 4 } }
    expect(resolveConfig({ file, filePath: 'c.yaml', flags: {}, env: {} }).gpus).toBe(4)
    expect(resolveConfig({ file, filePath: 'c.yaml', flags: { gpus: '2' }, env: {} }).gpus).toBe(2)
    expect(() => resolveConfig({ file: null, filePath: null, flags: { gpus: '0' }, env: {} })).toThrow(/--gpus "0": expected a positive integer/)
  })
})
