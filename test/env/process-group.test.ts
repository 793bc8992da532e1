import { describe, expect, it } from 'vitest'
import { countForeign, queryGpuSamples, usesGpu, visibleGpus } from '../../src/env/nvidia-smi.js'
import { parseStatPgid, readProcessGroup } from '../../src/env/process-group.js'
import { fakeNvidiaSmiScript, pathWith } from './fake-nvidia-smi.js'

describe('process groups from /proc/<pid>/stat', () => {
  it('reads field 5 after the last parenthesis, whatever the command name holds', () => {
    expect(parseStatPgid('4321 (python3) S 4000 4000 4000 0 -1 4194560 …')).toBe(4000)
    expect(parseStatPgid('4321 (vllm (worker) 1) R 1 77 77 0')).toBe(77)
    expect(parseStatPgid('4321 (a b) S 1')).toBeNull()
    expect(parseStatPgid('garbage')).toBeNull()
  })

  it('reads this process and its group from /proc', () => {
    // vitest workers share the runner's group or lead their own: either way, a positive group.
    const own = readProcessGroup(process.pid)
    if (own !== null) expect(own).toBeGreaterThan(0)
    expect(readProcessGroup(2 ** 22 + 12345)).toBeNull()
  })
})

describe('attributing compute apps by the server process group', () => {
  const groups: Record<number, number> = { 111: 100, 112: 100, 222: 200, 333: 300 }
  const pgidOf = (pid: number): number | null => groups[pid] ?? null

  it('never counts the group’s own processes, and counts every other one on the GPU', () => {
    const server = { kind: 'group' as const, pgid: 100 }
    expect(countForeign([{ pid: 111 }, { pid: 112 }], server, pgidOf)).toBe(0)
    // The other side's engine on the same GPU is foreign.
    expect(countForeign([{ pid: 111 }, { pid: 222 }], server, pgidOf)).toBe(1)
    expect(countForeign([{ pid: 111 }, { pid: 222 }, { pid: 333 }, { pid: 999 }], server, pgidOf)).toBe(3)
  })

  it('falls back to one process per GPU being the server where none of its group is on that GPU', () => {
    const server = { kind: 'group' as const, pgid: 100 }
    expect(countForeign([{ pid: 999 }], server, pgidOf)).toBe(0)
    expect(countForeign([{ pid: 222 }, { pid: 333 }], server, pgidOf)).toBe(1)
  })

  it('reads CUDA_VISIBLE_DEVICES as indices or UUIDs', () => {
    expect(visibleGpus(undefined)).toBeNull()
    expect(visibleGpus('0, 1')).toEqual(['0', '1'])
    expect(usesGpu(null, '3', 'GPU-x')).toBe(true)
    expect(usesGpu(['1'], '1', 'GPU-bbb')).toBe(true)
    expect(usesGpu(['1'], '0', 'GPU-aaa')).toBe(false)
    expect(usesGpu(['GPU-bb'], '1', 'GPU-bbb')).toBe(true)
  })

  it('counts only the GPUs the server was given; the others keep no count', async () => {
    // The fake: GPU-aaa (0) runs pids 111 and 222, GPU-bbb (1) runs pid 111.
    const smi = pathWith(fakeNvidiaSmiScript())
    try {
      const onBoth = await queryGpuSamples(smi.exec, { kind: 'group', pgid: 100 }, undefined, pgidOf)
      expect(onBoth.map((s) => s.foreign_processes)).toEqual([1, 0])
      const asOther = await queryGpuSamples(smi.exec, { kind: 'group', pgid: 200 }, undefined, pgidOf)
      expect(asOther.map((s) => s.foreign_processes)).toEqual([1, 0])
      const onlyGpu1 = await queryGpuSamples(smi.exec, { kind: 'group', pgid: 100, gpus: ['1'] }, undefined, pgidOf)
      expect(onlyGpu1.map((s) => s.foreign_processes)).toEqual([null, 0])
    } finally {
      smi.cleanup()
    }
  })
})
