import { describe, expect, it } from 'vitest'
import { buildPlan, type PlanPoint } from '../../src/plan/plan.js'
import { buildRequests, endpointUrl, promptTokenIds, promptWords, TOKEN_ID_MAX, TOKEN_ID_MIN } from '../../src/plan/prompts.js'

const plan = buildPlan({
  shapes: [{ inputLen: 64, outputLen: 8 }],
  concurrency: [1, 4],
  repeats: 3,
  seed: 42,
  promptsPerConcurrency: 3,
  warmup: 'auto',
})
const target = { root: 'http://127.0.0.1:8000', model: 'm', api: 'completions' as const, apiKey: null }
const point = plan.find((p) => p.key === '64x8@c4#r2')!

describe('buildRequests (completions)', () => {
  const { warmup, measured } = buildRequests(point, target)

  it('plans the warmup and measured counts of the point', () => {
    expect(warmup).toHaveLength(4)
    expect(measured).toHaveLength(12)
  })

  it('sends exactly input_len token ids in range, with ignore_eos, streaming usage and max_tokens', () => {
    for (const r of [...warmup, ...measured]) {
      const body = JSON.parse(r.body)
      expect(body).toMatchObject({ model: 'm', max_tokens: 8, ignore_eos: true, stream: true, stream_options: { include_usage: true }, temperature: 0 })
      expect(body.prompt).toHaveLength(64)
      expect(body.prompt.every((t: number) => Number.isInteger(t) && t >= TOKEN_ID_MIN && t <= TOKEN_ID_MAX)).toBe(true)
      expect(r).toMatchObject({ url: 'http://127.0.0.1:8000/v1/completions', api: 'completions', promptTokens: 64, maxTokens: 8 })
    }
  })

  it('sends no authorization header without a key, and a bearer token with one', () => {
    expect(measured[0]!.headers.authorization).toBeUndefined()
    expect(buildRequests(point, { ...target, apiKey: 'sk-1' }).measured[0]!.headers.authorization).toBe('Bearer sk-1')
  })

  it('names requests uniquely, warmup apart from measured', () => {
    expect(warmup[0]!.id).toBe('sg-64x8@c4#r2-w0')
    expect(measured[11]!.id).toBe('sg-64x8@c4#r2-m11')
  })

  it('is reproducible: the same point gives the same bodies', () => {
    expect(buildRequests(point, target).measured.map((r) => r.body)).toEqual(measured.map((r) => r.body))
  })
})

describe('prompt uniqueness across a whole sweep', () => {
  const all = plan.flatMap((p: PlanPoint) => {
    const { warmup, measured } = buildRequests(p, target)
    return [...warmup, ...measured]
  })

  it('has unique request ids across every point and repeat', () => {
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length)
  })

  it('never lets two prompts share their first 16-token block (no prefix-cache hit between requests)', () => {
    const blocks = all.map((r) => JSON.stringify(JSON.parse(r.body).prompt.slice(0, 16)))
    expect(new Set(blocks).size).toBe(all.length)
  })

  it('already differs in the first 5 tokens, whatever the block size', () => {
    const heads = all.map((r) => JSON.stringify(JSON.parse(r.body).prompt.slice(0, 5)))
    expect(new Set(heads).size).toBe(all.length)
  })
})

describe('buildRequests (chat)', () => {
  const chat = buildRequests(point, { ...target, api: 'chat' })

  it('posts a user message of input_len words to the chat endpoint', () => {
    const body = JSON.parse(chat.measured[0]!.body)
    expect(chat.measured[0]!.url).toBe('http://127.0.0.1:8000/v1/chat/completions')
    expect(body.messages).toHaveLength(1)
    expect(body.messages[0].role).toBe('user')
    expect(body.messages[0].content.split(' ')).toHaveLength(64)
    expect(body).toMatchObject({ max_tokens: 8, ignore_eos: true, stream: true, stream_options: { include_usage: true } })
  })

  it('gives every chat prompt a different opening', () => {
    const heads = [...chat.warmup, ...chat.measured].map((r) => JSON.parse(r.body).messages[0].content.split(' ').slice(0, 8).join(' '))
    expect(new Set(heads).size).toBe(heads.length)
  })

  it('sends each prompt with its calibrated word count by serial, cutting or extending only the tail', () => {
    const total = point.warmupRequests + point.numPrompts
    const counts = Array.from({ length: total }, (_, serial) => 59 + (serial % 3))
    const calibrated = buildRequests(point, { ...target, api: 'chat' }, counts)
    const content = (r: { body: string }): string[] => JSON.parse(r.body).messages[0].content.split(' ')
    const sent = [...calibrated.warmup, ...calibrated.measured]
    expect(sent.map((r) => content(r).length)).toEqual(counts)
    const plain = [...chat.warmup, ...chat.measured]
    sent.forEach((r, serial) => expect(content(plain[serial]!).slice(0, counts[serial])).toEqual(content(r)))
    // The planned prompt length stays input_len: calibration made the words fit it.
    expect(sent.every((r) => r.promptTokens === 64)).toBe(true)
  })
})

describe('prompt encoders', () => {
  it('encode the serial then the seed in the first five token ids', () => {
    // serial 16385 = 1·2^14 + 1; seed 0x12345678 = 305419896 = 1·2^28 + 2257·2^14 + 5752
    expect(promptTokenIds(0x12345678, 16385, 5)).toEqual([1001, 1001, 1001, 1000 + 2257, 1000 + 5752])
  })

  it('truncate to a prompt shorter than the code', () => {
    expect(promptTokenIds(7, 3, 2)).toEqual([1000, 1003])
    expect(promptWords(7, 3, 3)).toHaveLength(3)
  })

  it('join the endpoint onto a root with or without a trailing slash', () => {
    expect(endpointUrl('http://h/llm/', 'chat')).toBe('http://h/llm/v1/chat/completions')
  })
})
