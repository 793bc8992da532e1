/**
 * The simulator's chat template, applied to chat requests and to POST
 * /tokenize with `messages` as a real engine applies the model's template.
 * It is ChatML (Qwen's format, without a default system prompt), rendered as
 * whitespace-separated words so the simulator's word = token tokenizer counts it:
 *
 *     <|im_start|> {role} {content} <|im_end|>     for every message
 *     <|im_start|> assistant                       the generation prompt
 *
 * So each message costs 3 tokens beyond its content (two markers and the
 * role) and the generation prompt 2: a one-message prompt of N content
 * tokens is N + 5 tokens. The shared preamble is `<|im_start|> user`, 2
 * tokens, well under a 16-token prefix-cache block and under the
 * `chatPreambleTokens` the prefix-cache validity rule tolerates.
 */
import type { ChatMessageLike } from './tokenizer.js'

const IM_START = '<|im_start|>'
const IM_END = '<|im_end|>'

/** Text of one message's content: a string, or the text parts of an array joined by spaces. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  for (const p of content) {
    if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') parts.push((p as { text: string }).text)
  }
  return parts.join(' ')
}

/**
 * The prompt a chat request becomes under the template, as text for the
 * simulator's tokenizer. `addGenerationPrompt` appends the assistant turn's
 * opening (vLLM's default for chat completions and for /tokenize).
 */
export function applyChatTemplate(messages: readonly ChatMessageLike[], addGenerationPrompt = true): string {
  let out = ''
  for (const m of messages) {
    const role = typeof m.role === 'string' && m.role.trim() !== '' ? m.role : 'user'
    out += `${IM_START} ${role} ${contentText(m.content)} ${IM_END} `
  }
  if (addGenerationPrompt) out += `${IM_START} assistant`
  return out
}
