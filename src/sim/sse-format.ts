/**
 * The SSE events of one streamed response, as vLLM writes them. Prefixes and
 * suffixes are built once per request so a token chunk costs two string
 * concatenations; token text needs no JSON escaping (generated words are
 * " tokN").
 */
import type { SimApi } from './request.js'

export interface SseStyle {
  /** Line end: "\n", or "\r\n" for the CRLF quirk. */
  eol: string
}

/** Builds every event string of one response. */
export class SseFormat {
  private readonly head: string
  private readonly contentOpen: string
  private readonly reasoningOpen: string
  private readonly tail: string
  private readonly end: string

  constructor(
    private readonly api: SimApi,
    id: string,
    model: string,
    created: number,
    style: SseStyle,
  ) {
    const eol = style.eol
    this.end = eol + eol
    this.head = `data: {"id":${JSON.stringify(id)},"object":"${api === 'chat' ? 'chat.completion.chunk' : 'text_completion'}","created":${created},"model":${JSON.stringify(model)},`
    if (api === 'chat') {
      this.contentOpen = `${this.head}"choices":[{"index":0,"delta":{"content":"`
      this.reasoningOpen = `${this.head}"choices":[{"index":0,"delta":{"reasoning_content":"`
      this.tail = `"},"logprobs":null,"finish_reason":null}]}${this.end}`
    } else {
      this.contentOpen = `${this.head}"choices":[{"index":0,"text":"`
      this.reasoningOpen = this.contentOpen
      this.tail = `","logprobs":null,"finish_reason":null,"stop_reason":null}]}${this.end}`
    }
  }

  /** Chat's first event: the assistant role with empty content. Empty for completions. */
  roleChunk(): string {
    if (this.api !== 'chat') return ''
    return `${this.head}"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}${this.end}`
  }

  /** A content event carrying `text`. */
  content(text: string): string {
    return this.contentOpen + text + this.tail
  }

  /**
   * A content event split around its text, for a text written in pieces (the
   * `huge-line` fault): `head` + text + `close` is the `data:` line, `end` the
   * line end and blank line that close the event.
   */
  contentParts(): { head: string; close: string; end: string } {
    return { head: this.contentOpen, close: this.tail.slice(0, this.tail.length - this.end.length), end: this.end }
  }

  /** A reasoning event (chat) carrying `text`. */
  reasoning(text: string): string {
    return this.reasoningOpen + text + this.tail
  }

  /** The last token event, carrying `finishReason`. */
  lastContent(text: string, finishReason: string, reasoning: boolean): string {
    const open = reasoning ? this.reasoningOpen : this.contentOpen
    const tail =
      this.api === 'chat'
        ? `"},"logprobs":null,"finish_reason":"${finishReason}","stop_reason":null}]}${this.end}`
        : `","logprobs":null,"finish_reason":"${finishReason}","stop_reason":null}]}${this.end}`
    return open + text + tail
  }

  /** The usage event (`choices: []`) sent when stream_options.include_usage is set. */
  usage(promptTokens: number, completionTokens: number): string {
    return `${this.head}"choices":[],"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + completionTokens},"completion_tokens":${completionTokens}}}${this.end}`
  }

  /** The final sentinel. */
  done(): string {
    return `data: [DONE]${this.end}`
  }

  /** An SSE comment line (ignored by conforming parsers). */
  comment(): string {
    return `: keep-alive${this.end}`
  }

  /** An error event inside the stream, as the engine sends when generation fails. */
  error(errorObject: Record<string, unknown>): string {
    return `data: ${JSON.stringify({ error: errorObject })}${this.end}`
  }

  /** A data line that is not valid JSON (the `malformed` fault). */
  malformed(): string {
    return `${this.contentOpen} tok${this.end}`
  }
}
