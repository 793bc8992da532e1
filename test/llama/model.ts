/**
 * The llama.cpp lane's model, made here: a llama-architecture GGUF with seeded random weights,
 * written in well under a second and cached under test/llama/kit/.models by its parameters
 * (test/llama/README.md lists them).
 *
 * - Vocabulary: 32 000 SentencePiece pieces (llama-2's size: servegate's completions prompts are
 *   token ids 1000–30000, inside every common vocabulary), with byte fallback (<0x00>…<0xFF>),
 *   <unk>, <s> (BOS, added to every prompt), </s> (EOS) and the chat template's <|im_start|> and
 *   <|im_end|>. servegate's prompt words are single pieces after a space (▁time), as common words
 *   are in real tokenizers; the rest are seeded letter strings, so most other text splits.
 * - A ChatML chat template in the metadata (tokenizer.chat_template).
 * - Generation never ends early and streams only text: the residual stream's dimension 0 is held
 *   at 1 (every embedding has 1 there; no attention or feed-forward output writes to it), and the
 *   output rows of the control, byte and bare-space pieces are −50 along it, so llama.cpp never
 *   samples them. Every generated token is a text piece, one streamed chunk each.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, existsSync, openSync, writeSync, closeSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRng } from '../../src/util/rng.js'
import { WORDS } from '../../src/plan/words.js'
import { ggufBuffers, type GgufTensor, type GgufValue } from './gguf-writer.js'

export interface TestModelSpec {
  /** Transformer blocks: the lane's engine has 4; twice as many is its real slowdown. */
  layers: number
  embedding: number
  heads: number
  feedForward: number
  vocab: number
  contextLength: number
  seed: number
}

export const BASE_MODEL: TestModelSpec = { layers: 4, embedding: 256, heads: 4, feedForward: 4096, vocab: 32000, contextLength: 4096, seed: 7 }

export const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

const SPACE = '\u2581'
const CONTROL = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>']
// SentencePiece token types.
const NORMAL = 1
const UNKNOWN = 2
const CONTROL_TYPE = 3
const BYTE = 6

/** Letters by rough English frequency, so the filler pieces look like word parts. */
const LETTERS = 'eeeeeeeeeeeetttttttttaaaaaaaaooooooooiiiiiiinnnnnnnssssssrrrrrrhhhhhhllllddddccccuuummmwwffggyyppbbvkjxqz'

/** The model's SentencePiece vocabulary as its GGUF file holds it (hf-tokenizer.ts exports the same pieces). */
export interface Vocab {
  tokens: string[]
  scores: Float32Array
  types: Int32Array
  /** Pieces llama.cpp must never generate. */
  banned: number[]
}

/** The vocabulary of the model `spec` describes: the pieces, scores and types its GGUF file holds. */
export function vocabulary(spec: TestModelSpec): Vocab {
  const tokens: string[] = [...CONTROL]
  const types: number[] = [UNKNOWN, CONTROL_TYPE, CONTROL_TYPE, CONTROL_TYPE, CONTROL_TYPE]
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
    types.push(BYTE)
  }
  const seen = new Set<string>(tokens)
  // Every prefix of a piece is a piece (as in a vocabulary learnt by merges), so the tokenizer can
  // reach every piece from its characters.
  const add = (piece: string): void => {
    for (let n = 1; n <= piece.length; n++) {
      const p = piece.slice(0, n)
      if (seen.has(p) || tokens.length >= spec.vocab) continue
      seen.add(p)
      tokens.push(p)
      types.push(NORMAL)
    }
  }
  for (let c = 33; c < 127; c++) add(String.fromCharCode(c))
  for (const w of WORDS) add(SPACE + w)
  const rng = createRng(spec.seed ^ 0x5eed)
  while (tokens.length < spec.vocab) {
    const len = rng.int(2, 7)
    let s = ''
    for (let i = 0; i < len; i++) s += LETTERS[rng.int(0, LETTERS.length - 1)]
    add(rng.next() < 0.6 ? SPACE + s : s)
  }
  // SentencePiece merges the highest-scoring pair first: longer pieces score higher, so a word
  // that is a piece comes out whole.
  const scores = Float32Array.from(tokens, (t, i) => (types[i] === NORMAL ? t.length - i / (10 * spec.vocab) : 0))
  // llama.cpp generates only whole-word pieces (▁ and at least one letter): the text it streams
  // tokenizes back to the same count, one piece per word, as natural text nearly does.
  const banned = tokens.map((t, i) => (types[i] !== NORMAL || !t.startsWith(SPACE) || t.length < 2 ? i : -1)).filter((i) => i >= 0)
  return { tokens, scores, types: Int32Array.from(types), banned }
}

/** Seeded uniform weights with the given standard deviation. */
function weights(n: number, std: number, rng: ReturnType<typeof createRng>): Float32Array {
  const a = std * Math.sqrt(3)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = (rng.next() * 2 - 1) * a
  return out
}

function tensors(spec: TestModelSpec, vocab: Vocab): GgufTensor[] {
  const { embedding: e, feedForward: ff, layers } = spec
  const v = vocab.tokens.length
  const rng = createRng(spec.seed)
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1)
  const embd = weights(e * v, 0.5, rng)
  for (let t = 0; t < v; t++) embd[t * e] = 1 // dimension 0 of every embedding
  const out: GgufTensor[] = [{ name: 'token_embd.weight', dims: [e, v], data: embd }]
  for (let l = 0; l < layers; l++) {
    const p = `blk.${l}.`
    const wo = weights(e * e, 0.02, rng)
    wo.fill(0, 0, e) // output row 0 (ne[0] = input): nothing writes dimension 0
    const down = weights(ff * e, 0.02, rng)
    down.fill(0, 0, ff)
    out.push(
      { name: `${p}attn_norm.weight`, dims: [e], data: ones(e) },
      { name: `${p}attn_q.weight`, dims: [e, e], data: weights(e * e, 0.02, rng) },
      { name: `${p}attn_k.weight`, dims: [e, e], data: weights(e * e, 0.02, rng) },
      { name: `${p}attn_v.weight`, dims: [e, e], data: weights(e * e, 0.02, rng) },
      { name: `${p}attn_output.weight`, dims: [e, e], data: wo },
      { name: `${p}ffn_norm.weight`, dims: [e], data: ones(e) },
      { name: `${p}ffn_gate.weight`, dims: [e, ff], data: weights(e * ff, 0.02, rng) },
      { name: `${p}ffn_up.weight`, dims: [e, ff], data: weights(e * ff, 0.02, rng) },
      { name: `${p}ffn_down.weight`, dims: [ff, e], data: down },
    )
  }
  const output = weights(e * v, 0.05, rng)
  for (const t of vocab.banned) {
    output.fill(0, t * e, (t + 1) * e)
    output[t * e] = -50
  }
  out.push({ name: 'output_norm.weight', dims: [e], data: ones(e) }, { name: 'output.weight', dims: [e, v], data: output })
  return out
}

function metadata(spec: TestModelSpec, vocab: Vocab): Array<[string, GgufValue]> {
  return [
    ['general.architecture', { str: 'llama' }],
    ['general.name', { str: `servegate-test-llama-${spec.layers}l` }],
    ['general.alignment', { u32: 32 }],
    ['llama.context_length', { u32: spec.contextLength }],
    ['llama.embedding_length', { u32: spec.embedding }],
    ['llama.block_count', { u32: spec.layers }],
    ['llama.feed_forward_length', { u32: spec.feedForward }],
    ['llama.rope.dimension_count', { u32: spec.embedding / spec.heads }],
    ['llama.attention.head_count', { u32: spec.heads }],
    ['llama.attention.head_count_kv', { u32: spec.heads }],
    ['llama.attention.layer_norm_rms_epsilon', { f32: 1e-5 }],
    ['llama.vocab_size', { u32: vocab.tokens.length }],
    ['tokenizer.ggml.model', { str: 'llama' }],
    ['tokenizer.ggml.tokens', { strings: vocab.tokens }],
    ['tokenizer.ggml.scores', { f32s: vocab.scores }],
    ['tokenizer.ggml.token_type', { i32s: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { u32: 0 }],
    ['tokenizer.ggml.bos_token_id', { u32: 1 }],
    ['tokenizer.ggml.eos_token_id', { u32: 2 }],
    ['tokenizer.ggml.add_bos_token', { bool: true }],
    ['tokenizer.ggml.add_eos_token', { bool: false }],
    ['tokenizer.chat_template', { str: CHAT_TEMPLATE }],
  ]
}

export const MODELS_DIR = fileURLToPath(new URL('./kit/.models/', import.meta.url))

/** Where the model file for `spec` lives: named by a hash of its parameters and this maker's version. */
export function testModelPath(spec: TestModelSpec = BASE_MODEL): string {
  const id = createHash('sha256').update(JSON.stringify(spec)).update(CHAT_TEMPLATE).update(`maker-v2`).digest('hex').slice(0, 12)
  return join(MODELS_DIR, `servegate-test-llama-${spec.layers}l-${id}.gguf`)
}

/** The model file for `spec`, written once (atomically) and reused while its parameters and this maker stay the same. */
export function ensureTestModel(spec: TestModelSpec = BASE_MODEL): string {
  const file = testModelPath(spec)
  if (existsSync(file)) return file
  mkdirSync(MODELS_DIR, { recursive: true })
  const vocab = vocabulary(spec)
  const tmp = `${file}.${process.pid}.tmp`
  const fd = openSync(tmp, 'w')
  try {
    for (const b of ggufBuffers(metadata(spec, vocab), tensors(spec, vocab))) writeSync(fd, b)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, file)
  return file
}
