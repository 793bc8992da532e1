/**
 * A tokenizer of the client's own (`--tokenizer`, `server.tokenizer`), for
 * servers whose /tokenize cannot count (trtllm-serve and Dynamo have none): a
 * Hugging Face tokenizer (`tokenizer.json`, with `tokenizer_config.json` and
 * its chat template) read offline from a directory or from this host's
 * Hugging Face cache, run with @huggingface/tokenizers and the template with
 * @huggingface/jinja, the same files and template language the engines load.
 * It sizes chat prompts exactly and re-counts output; its identity (name,
 * where it was read, a hash of its files) is recorded in the result and in
 * the fingerprint, so a baseline and a candidate sized by other tokenizers
 * are never compared as alike.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Template } from '@huggingface/jinja'
import { Tokenizer } from '@huggingface/tokenizers'
import { UsageError } from '../errors.js'
import type { ChatMessage } from './tokenize.js'

/** What a result records of the tokenizer: its name, the directory it was read from, and a hash of its files. */
export interface TokenizerIdentity {
  name: string
  path: string
  /** sha256 of tokenizer.json, tokenizer_config.json and chat_template.jinja as read (first 16 hex digits). */
  sha256: string
}

export interface LocalTokenizer {
  identity: TokenizerIdentity
  /** Whether the files carry a chat template (chat prompts can be sized). */
  hasChatTemplate: boolean
  /** Tokens of a generated text, without special tokens (as a server's re-count). */
  countText(text: string): number
  /** Tokens a chat completion prefills for `messages`: the template with the generation prompt, tokenized as rendered. */
  countChat(messages: readonly ChatMessage[]): number
}

/** Where this host's Hugging Face cache keeps models (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub). */
export function hubCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE
  if (env.HF_HOME) return join(env.HF_HOME, 'hub')
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'huggingface', 'hub')
}

/**
 * The directory a `--tokenizer` value names: the directory itself, or a model id (`org/name`,
 * optionally `@revision`) resolved to its snapshot in the Hugging Face cache, offline.
 */
export function resolveTokenizerDir(spec: string, env: NodeJS.ProcessEnv = process.env): { dir: string; name: string } {
  if (existsSync(spec) && statSync(spec).isDirectory()) return { dir: spec, name: spec.replace(/\/+$/, '').split('/').slice(-2).join('/') }
  const m = /^([\w.-]+\/[\w.-]+)(?:@([\w.-]+))?$/.exec(spec)
  const cache = hubCache(env)
  if (m === null) throw new UsageError(`--tokenizer ${spec}: no such directory, and not a Hugging Face model id (org/name)`)
  const repo = join(cache, `models--${m[1]!.replace('/', '--')}`)
  const ref = m[2] ?? 'main'
  const refFile = join(repo, 'refs', ref)
  const rev = existsSync(refFile) ? readFileSync(refFile, 'utf8').trim() : /^[0-9a-f]{40}$/.test(ref) ? ref : null
  const dir = rev === null ? null : join(repo, 'snapshots', rev)
  if (dir === null || !existsSync(dir)) {
    throw new UsageError(
      `--tokenizer ${spec}: no directory ${spec}, and no snapshot of ${m[1]}${m[2] ? `@${m[2]}` : ''} in the Hugging Face cache at ${cache} (servegate reads tokenizers offline)`,
      `Download its files first, e.g. huggingface-cli download ${m[1]} tokenizer.json tokenizer_config.json, or pass the directory that holds them.`,
    )
  }
  return { dir, name: `${m[1]}@${rev}` }
}

/** A JSON file of the tokenizer, parsed, with a one-line error naming the file. */
function readJson(path: string, required: boolean): Record<string, unknown> | null {
  if (!existsSync(path)) {
    if (!required) return null
    throw new UsageError(`--tokenizer: ${path} is missing: a Hugging Face tokenizer directory holds tokenizer.json (and tokenizer_config.json)`)
  }
  try {
    const j = JSON.parse(readFileSync(path, 'utf8')) as unknown
    if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error('expected a JSON object')
    return j as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`--tokenizer: ${path} is not a tokenizer file: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** A special token's text from tokenizer_config.json (a string, or an AddedToken object's content). */
function tokenText(x: unknown): string {
  if (typeof x === 'string') return x
  if (x !== null && typeof x === 'object' && typeof (x as { content?: unknown }).content === 'string') return (x as { content: string }).content
  return ''
}

/** The chat template: chat_template.jinja beside the config, else the config's chat_template (a string, or the `default` of a list). */
function chatTemplateOf(dir: string, config: Record<string, unknown> | null): { text: string | null; file: string | null } {
  const file = join(dir, 'chat_template.jinja')
  if (existsSync(file)) return { text: readFileSync(file, 'utf8'), file: readFileSync(file, 'utf8') }
  const t = config?.['chat_template']
  if (typeof t === 'string') return { text: t, file: null }
  if (Array.isArray(t)) {
    const named = t.find((x) => x !== null && typeof x === 'object' && (x as { name?: unknown }).name === 'default') as { template?: unknown } | undefined
    if (typeof named?.template === 'string') return { text: named.template, file: null }
  }
  return { text: null, file: null }
}

/** Load the tokenizer `--tokenizer` names (a directory, or a model id in the Hugging Face cache). */
export function loadLocalTokenizer(spec: string, env: NodeJS.ProcessEnv = process.env): LocalTokenizer {
  const { dir, name } = resolveTokenizerDir(spec, env)
  const tokenizerPath = join(dir, 'tokenizer.json')
  const configPath = join(dir, 'tokenizer_config.json')
  const tokenizerJson = readJson(tokenizerPath, true)!
  const config = readJson(configPath, false)
  const template = chatTemplateOf(dir, config)
  const hash = createHash('sha256')
  hash.update(readFileSync(tokenizerPath))
  if (existsSync(configPath)) hash.update(readFileSync(configPath))
  if (template.file !== null) hash.update(template.file)
  let tokenizer: Tokenizer
  try {
    tokenizer = new Tokenizer(tokenizerJson, config ?? {})
  } catch (err) {
    throw new UsageError(`--tokenizer: ${tokenizerPath} could not be loaded: ${err instanceof Error ? err.message : String(err)}`)
  }
  let compiled: Template | null = null
  if (template.text !== null) {
    try {
      compiled = new Template(template.text)
    } catch (err) {
      throw new UsageError(`--tokenizer: the chat template in ${dir} does not parse: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  const specials = {
    bos_token: tokenText(config?.['bos_token']),
    eos_token: tokenText(config?.['eos_token']),
    unk_token: tokenText(config?.['unk_token']),
    pad_token: tokenText(config?.['pad_token']),
  }
  return {
    identity: { name, path: dir, sha256: hash.digest('hex').slice(0, 16) },
    hasChatTemplate: compiled !== null,
    countText: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
    countChat(messages) {
      if (compiled === null) throw new UsageError(`--tokenizer: ${dir} has no chat template, so it cannot size chat prompts`)
      // As the engines' chat completions render it: the generation prompt on, the template's own special tokens as text.
      const text = compiled.render({ ...specials, messages: messages.map((m) => ({ ...m })), add_generation_prompt: true })
      return tokenizer.encode(text, { add_special_tokens: false }).ids.length
    },
  }
}
