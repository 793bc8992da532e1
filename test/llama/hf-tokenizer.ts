/**
 * The lane's model's tokenizer as a Hugging Face tokenizer directory (`tokenizer.json`,
 * `tokenizer_config.json`), written beside the model file, for servegate's `--tokenizer` (a
 * client-side tokenizer for servers with no /tokenize: trtllm-serve). It is built from the same
 * vocabulary the GGUF file holds (model.ts) and tokenizes as llama.cpp's SentencePiece tokenizer
 * (llm_tokenizer_spm, src/llama-vocab.cpp) does, as Hugging Face's own converter writes a llama-2
 * tokenizer (LlamaConverter in transformers' convert_slow_tokenizer.py):
 *
 * - model BPE with byte fallback, one merge `left right` for every piece that two pieces make,
 *   ranked by the merged piece's score, highest first: llama.cpp merges the adjacent pair whose
 *   concatenation is the highest-scoring piece, and a text no piece covers becomes <0xXX> pieces;
 * - normalizer Prepend("▁") then Replace(" ", "▁") on each stretch of text between special tokens:
 *   llama.cpp escapes spaces as ▁ and prefixes a space to the text at the start and after every
 *   special token (add_space_prefix, "prefix with space if previous is special");
 * - the control pieces (<unk>, <s>, </s>, <|im_start|>, <|im_end|>) as special added tokens, which
 *   both split out of a text (llama.cpp with parse_special);
 * - a post-processor that adds <s> (the GGUF's add_bos_token), and the ChatML template.
 *
 * engines.test.ts checks it against llama.cpp on many texts.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BASE_MODEL, CHAT_TEMPLATE, testModelPath, vocabulary, type TestModelSpec } from './model.js'

/** Bump when the files written change, so a cached directory is written again. */
const EXPORTER = 'hf-v1'
const SPACE = '\u2581'
// SentencePiece token types, as model.ts writes them into tokenizer.ggml.token_type.
const NORMAL = 1

/** The tokenizer directory of the model `spec` describes, beside its GGUF file. */
export function testTokenizerDir(spec: TestModelSpec = BASE_MODEL): string {
  return testModelPath(spec).replace(/\.gguf$/, `.${EXPORTER}-tokenizer`)
}

/** The tokenizer directory for `spec`, written once (atomically) and reused while the model and this exporter stay the same. */
export function ensureTestTokenizer(spec: TestModelSpec = BASE_MODEL): string {
  const dir = testTokenizerDir(spec)
  if (existsSync(join(dir, 'tokenizer.json'))) return dir
  const tmp = `${dir}.${process.pid}.tmp`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  const { tokenizer, config } = hfTokenizerFiles(spec)
  writeFileSync(join(tmp, 'tokenizer.json'), JSON.stringify(tokenizer))
  writeFileSync(join(tmp, 'tokenizer_config.json'), JSON.stringify(config, null, 2))
  rmSync(dir, { recursive: true, force: true })
  renameSync(tmp, dir)
  return dir
}

/** tokenizer.json and tokenizer_config.json of the model `spec` describes. */
export function hfTokenizerFiles(spec: TestModelSpec = BASE_MODEL): { tokenizer: object; config: object } {
  const vocab = vocabulary(spec)
  const { tokens, scores, types } = vocab
  const normal = new Set(tokens.filter((_, i) => types[i] === NORMAL))
  // Every way two pieces make a piece, ranked by the merged piece's score (llama.cpp's order).
  const merges: Array<{ pair: [string, string]; score: number; id: number; split: number }> = []
  tokens.forEach((t, id) => {
    if (types[id] !== NORMAL) return
    const chars = Array.from(t)
    for (let k = 1; k < chars.length; k++) {
      const left = chars.slice(0, k).join('')
      const right = chars.slice(k).join('')
      if (normal.has(left) && normal.has(right)) merges.push({ pair: [left, right], score: scores[id]!, id, split: k })
    }
  })
  merges.sort((a, b) => b.score - a.score || a.id - b.id || a.split - b.split)
  const specials = tokens.map((t, id) => ({ t, id })).filter(({ id }) => types[id] !== NORMAL && !/^<0x[0-9A-F]{2}>$/.test(tokens[id]!))
  const added = specials.map(({ t, id }) => ({ id, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }))
  const bos = tokens[1]!
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Prepend', prepend: SPACE },
        { type: 'Replace', pattern: { String: ' ' }, content: SPACE },
      ],
    },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: bos, type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: bos, type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { [bos]: { id: bos, ids: [1], tokens: [bos] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: SPACE }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: tokens[0],
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab: Object.fromEntries(tokens.map((t, i) => [t, i])),
      merges: merges.map((m) => m.pair),
    },
  }
  const config = {
    tokenizer_class: 'LlamaTokenizerFast',
    add_bos_token: true,
    add_eos_token: false,
    bos_token: bos,
    eos_token: tokens[2],
    unk_token: tokens[0],
    pad_token: null,
    legacy: true,
    clean_up_tokenization_spaces: false,
    model_max_length: spec.contextLength,
    additional_special_tokens: specials.filter(({ id }) => id > 2).map((s) => s.t),
    added_tokens_decoder: Object.fromEntries(added.map(({ id, ...token }) => [String(id), token])),
    chat_template: CHAT_TEMPLATE,
  }
  return { tokenizer, config }
}
