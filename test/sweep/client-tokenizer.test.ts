import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadLocalTokenizer, resolveTokenizerDir } from '../../src/client/local-tokenizer.js'
import { UsageError } from '../../src/errors.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import { HOST_CODES } from '../fixtures/honest-verdict.js'
import { codesOf as codes, runsOf as runs, SMALL_SWEEP, useSimSweep } from '../fixtures/sim-sweep.js'

// A tokenizer of the client's own (--tokenizer): examples/sim-tokenizer is the simulator's
// tokenizer and chat template in Hugging Face's files (a word is a token; ChatML rendered as
// words), loaded with @huggingface/tokenizers and @huggingface/jinja as a model's would be. Against
// a server with no /tokenize (trtllm-serve's routes: `sim --tokenize none`) it sizes chat prompts
// exactly, where without it the runs are prompt_uncalibrated with a message naming --tokenizer.
const SIM_TOKENIZER = join(import.meta.dirname, '../../examples/sim-tokenizer')

describe('--tokenizer: a tokenizer of the client’s own', () => {
  const { sweep, dir } = useSimSweep('client-tokenizer', { api: 'chat', ...SMALL_SWEEP })

  it("sizes chat prompts exactly against a server with no /tokenize, and records the tokenizer's identity", async () => {
    const { result, lines } = await sweep({ tokenize: 'none' }, { tokenizer: SIM_TOKENIZER })
    const local = loadLocalTokenizer(SIM_TOKENIZER)
    expect(result.config['prompt_calibration']).toBe('tokenize')
    expect(result.config['prompt_calibration_inexact']).toBe(0)
    expect(result.config['tokenizer']).toEqual({
      name: local.identity.name,
      sha256: local.identity.sha256,
      server_check: "not run: the server's /tokenize cannot count chat messages (/tokenize: HTTP 404; /apply-template: HTTP 404)",
    })
    expect(lines).toContain(`Chat prompts are calibrated to exactly input_len tokens with the tokenizer ${local.identity.name} (its chat template included).`)
    expect(
      lines.some((l) => l.startsWith(`Tokenizer ${local.identity.name} (sha256 ${local.identity.sha256}): its cross-check with `) && l.includes('was not run')),
    ).toBe(true)
    expect(fingerprintOf(result).tokenizer).toBe(`${local.identity.name} sha256:${local.identity.sha256}`)
    for (const run of runs(result)) {
      // Nothing but what a busy host may still leave after the run's two retries: the prompts' lengths hold either way.
      expect(codes(run).filter((c) => !(HOST_CODES as readonly string[]).includes(c))).toEqual([])
      // Every prompt exactly input_len tokens by the server's own count, and the output re-counted by the client.
      expect(run.tokens.prompt_server_usage).toBe(run.completed * 48)
      expect(run.tokens.retokenized).toBe(run.completed * 12)
    }
  })

  it('without it, the same chat sweep is prompt_uncalibrated, and the message names --tokenizer', async () => {
    const { result } = await sweep({ tokenize: 'none' }, {})
    expect(result.config['prompt_calibration']).toBe('none')
    expect(fingerprintOf(result).tokenizer).toBe('server')
    const run = runs(result)[0]!
    expect(codes(run)).toContain('prompt_uncalibrated')
    expect(run.validity.issues.find((i) => i.code === 'prompt_uncalibrated')!.detail).toContain(
      "give servegate the model's tokenizer (--tokenizer DIR or a Hugging Face model id)",
    )
  })

  it("agrees with a server's /tokenize that counts alike, and reports one that does not", async () => {
    const agree = await sweep({}, { tokenizer: SIM_TOKENIZER })
    expect((agree.result.config['tokenizer'] as { server_check: string }).server_check).toMatch(/^agrees \(\d+, \d+, \d+ tokens on 3 prompts\)$/)
    expect(agree.lines.some((l) => /^Tokenizer .*: it agrees with http:\/\/127\.0\.0\.1:\d+\/tokenize \(\d+, \d+, \d+ tokens on 3 prompts\)\.$/.test(l))).toBe(
      true,
    )
    // The same files with a template that adds one token a message: not the model's template.
    const other = join(dir(), 'other-template')
    cpSync(SIM_TOKENIZER, other, { recursive: true })
    const config = JSON.parse(readFileSync(join(other, 'tokenizer_config.json'), 'utf8')) as { chat_template: string }
    config.chat_template = config.chat_template.replace("'<|im_start|> ' + message['role']", "'<|im_start|> system-note ' + message['role']")
    writeFileSync(join(other, 'tokenizer_config.json'), JSON.stringify(config))
    const off = await sweep({}, { tokenizer: other })
    const check = (off.result.config['tokenizer'] as { server_check: string }).server_check
    expect(check).toMatch(
      /^disagrees: (\d+) vs \d+, (\d+) vs \d+, (\d+) vs \d+ tokens \(the tokenizer's count vs the server's\) on prompts of 16, 128, 1024 words$/,
    )
    for (const [, a, b] of check.matchAll(/(\d+) vs (\d+)/g)) expect(Number(a)).toBe(Number(b) + 1)
    expect(off.lines.some((l) => l.startsWith('Warning: the tokenizer ') && l.includes('disagrees'))).toBe(true)
    // Sized by the wrong template, every prompt is one token short of what the server prefills: caught.
    expect(codes(runs(off.result)[0]!)).toContain('input_len_mismatch')
  })

  it('reads a model id from the Hugging Face cache offline, and names what is missing in one line', () => {
    const hub = join(dir(), 'hub')
    const snap = join(hub, 'models--servegate--sim-model', 'snapshots', 'a'.repeat(40))
    cpSync(SIM_TOKENIZER, snap, { recursive: true })
    writeFileSync(join(dir(), 'main'), 'a'.repeat(40))
    cpSync(join(dir(), 'main'), join(hub, 'models--servegate--sim-model', 'refs', 'main'))
    expect(resolveTokenizerDir('servegate/sim-model', { HF_HUB_CACHE: hub })).toEqual({ dir: snap, name: `servegate/sim-model@${'a'.repeat(40)}` })
    const missing = (): unknown => resolveTokenizerDir('servegate/other-model', { HF_HUB_CACHE: hub })
    expect(missing).toThrow(UsageError)
    expect(missing).toThrow(
      `--tokenizer servegate/other-model: no directory servegate/other-model, and no snapshot of servegate/other-model in the Hugging Face cache at ${hub} (servegate reads tokenizers offline)`,
    )
    expect(() => loadLocalTokenizer(dir())).toThrow(`--tokenizer: ${join(dir(), 'tokenizer.json')} is missing`)
  })
})
