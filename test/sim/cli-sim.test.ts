import { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { parseSimFlags, registerSimCommand } from '../../src/cli/sim.js'
import { UsageError } from '../../src/errors.js'

describe('servegate sim flags', () => {
  it('turns flags into simulator options', () => {
    expect(
      parseSimFlags({
        port: '0',
        ttftMs: '100',
        itlMs: '20',
        fault: ['stall', 'http500'],
        faultRate: '0.1',
        prefixCache: true,
        stopEarlyAt: '7',
        usageSkew: '1.2',
      }),
    ).toMatchObject({
      port: 0,
      ttftMs: 100,
      itlMs: 20,
      prefixCache: true,
      stopEarlyAt: 7,
      usageSkew: 1.2,
      faults: [
        { kind: 'stall', rate: 0.1 },
        { kind: 'http500', rate: 0.1 },
      ],
    })
  })

  it('takes --vocab as a positive integer and names the flag when it is not', () => {
    expect(parseSimFlags({ vocab: '32000' })).toMatchObject({ vocab: 32000 })
    expect(parseSimFlags({}).vocab).toBeUndefined()
    expect(() => parseSimFlags({ vocab: '0' })).toThrow(new UsageError('--vocab "0": expected an integer ≥ 1'))
    expect(() => parseSimFlags({ vocab: '1.5' })).toThrow(new UsageError('--vocab "1.5": expected an integer ≥ 1'))
  })

  it('takes --tokenize as one of the dialects and names the flag when it is not', () => {
    expect(parseSimFlags({ tokenize: 'llama-server' })).toMatchObject({ tokenize: 'llama-server' })
    expect(parseSimFlags({ tokenize: 'none' })).toMatchObject({ tokenize: 'none' })
    expect(parseSimFlags({}).tokenize).toBeUndefined()
    expect(() => parseSimFlags({ tokenize: 'tgi' })).toThrow(new UsageError('--tokenize "tgi": expected one of vllm, llama-server, none'))
  })

  it('takes the stream faults and their settings', () => {
    expect(
      parseSimFlags({ fault: ['keepalive', 'overrun', 'trickle', 'huge-line'], faultRate: '0.25', faultIntervalMs: '20', hugeLineBytes: '2097152' }),
    ).toMatchObject({
      faultIntervalMs: 20,
      hugeLineBytes: 2097152,
      faults: [
        { kind: 'keepalive', rate: 0.25 },
        { kind: 'overrun', rate: 0.25 },
        { kind: 'trickle', rate: 0.25 },
        { kind: 'huge-line', rate: 0.25 },
      ],
    })
  })

  it('lists every fault kind in its help', () => {
    const program = new Command().exitOverride()
    registerSimCommand(program, { log: () => {}, waitForStop: async () => {} })
    let help = ''
    const cmd = program.commands.find((c) => c.name() === 'sim') as Command
    cmd.configureOutput({ writeOut: (t) => void (help += t) })
    cmd.outputHelp()
    for (const k of ['keepalive', 'overrun', 'trickle', 'huge-line', '--fault-interval-ms', '--huge-line-bytes']) expect(help).toContain(k)
  })

  it.each([
    [{ port: 'abc' }, '--port "abc": expected an integer in 0..65535'],
    [{ timeScale: '0' }, '--time-scale "0": expected a number > 0'],
    [{ tokensPerChunk: '1.5' }, '--tokens-per-chunk "1.5": expected an integer ≥ 1'],
    [
      { fault: ['meteor'], faultRate: '1' },
      '--fault "meteor": expected one of http500, http429, disconnect, stall, malformed, stream-error, keepalive, overrun, trickle, huge-line',
    ],
    [{ fault: ['trickle'], faultRate: '1', faultIntervalMs: '0' }, '--fault-interval-ms "0": expected a number > 0'],
    [{ fault: ['huge-line'], faultRate: '1', hugeLineBytes: '1.5' }, '--huge-line-bytes "1.5": expected an integer ≥ 1'],
    [{ fault: ['stall'] }, '--fault needs --fault-rate'],
    [{ faultRate: '0.5' }, '--fault-rate needs at least one --fault'],
    [{ fault: ['stall'], faultRate: '2' }, '--fault-rate "2": expected a number in 0..1'],
    [{ ttftMs: '10' }, '--ttft-ms and --itl-ms go together'],
    [{ ttftMs: '10', itlMs: '5', profile: 'default' }, 'choose either'],
  ])('rejects %j with a specific message', (flags, message) => {
    expect(() => parseSimFlags(flags)).toThrow(UsageError)
    expect(() => parseSimFlags(flags)).toThrow(message)
  })

  it('serves until told to stop, printing the URL', async () => {
    let stop: () => void = () => {}
    const lines: string[] = []
    const program = new Command().exitOverride()
    registerSimCommand(program, { log: (l) => lines.push(l), waitForStop: () => new Promise<void>((r) => (stop = r)) })
    const run = program.parseAsync(['node', 'servegate', 'sim', '--port', '0', '--ttft-ms', '1', '--itl-ms', '1'])
    for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(lines[0] ?? '')?.[1]
    expect(url).toBeDefined()
    expect((await fetch(`${url}/health`)).status).toBe(200)
    stop()
    await run
    expect(lines.at(-1)).toBe('servegate sim stopped')
  })

  it('rejects an unknown profile name through startSim', async () => {
    const program = new Command().exitOverride()
    registerSimCommand(program, { log: () => {}, waitForStop: async () => {} })
    await expect(program.parseAsync(['node', 'servegate', 'sim', '--port', '0', '--profile', 'nope'])).rejects.toThrow(/known profiles/)
  })
})
