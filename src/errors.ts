/**
 * A problem with what the user gave us (flags, config, files, an unreachable
 * server). cli.ts and action.ts print `message` and `hint` without a stack
 * trace and exit 2; anything else is a bug and keeps its stack.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message)
  }
}

/** Turn any thrown value into one readable line (for records and logs). */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    const cause = (err as { cause?: unknown }).cause
    const causeText = cause instanceof Error ? `: ${cause.message}` : ''
    return `${typeof code === 'string' ? `${code} ` : ''}${err.message}${causeText}`.trim()
  }
  return String(err)
}
