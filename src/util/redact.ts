/**
 * Secrets out of recorded text, at the source: a serve command, a container
 * reference or an error message may carry an API key, a Hugging Face token or
 * credentials in a URL, and whatever servegate records ends up in result
 * files, baselines, job summaries and PR comments. Redacted once when the
 * configuration is resolved, every later copy carries `***`. Pure.
 */

export const REDACTED = '***'

/** Known secrets shorter than this are not replaced everywhere (a 1-character "key" would shred the text). */
const MIN_KNOWN_SECRET = 4

// A flag is secret-like when one of its dash/underscore-separated words says so:
// --api-key, --token, --hf-token, --password, --client-secret, --access-token.
// Not --tokenizer, --max-num-batched-tokens or --ssl-keyfile: those hold no secret.
const SECRET_WORDS = new Set(['token', 'secret', 'password', 'passwd', 'apikey', 'credential', 'credentials'])
const SECRET_PAIRS = new Set(['api-key', 'access-key', 'secret-key', 'private-key'])

/** Whether a flag name (without dashes) holds a secret: api-key, hf-token, password; not tokenizer. */
export function isSecretFlagName(name: string): boolean {
  const words = name.toLowerCase().split(/[-_]+/).filter((w) => w !== '')
  if (words.some((w) => SECRET_WORDS.has(w))) return true
  for (let i = 1; i < words.length; i++) if (SECRET_PAIRS.has(`${words[i - 1]}-${words[i]}`)) return true
  return false
}

// A shell word: quoted, or a run of non-space characters.
const WORD = String.raw`(?:"[^"]*"|'[^']*'|[^\s"']+)`

// --flag value | --flag=value (a following flag is not a value: `--api-key --port 8000` keeps --port).
const FLAG = new RegExp(String.raw`(^|[\s"'(])(--?[A-Za-z][\w-]*)(=|\s+)(?!-)(${WORD})`, 'g')

// NAME=value where NAME ends in _TOKEN, _KEY, _SECRET, _PASSWORD (HF_TOKEN=…, -e OPENAI_API_KEY=…), or is one of those words.
const ASSIGN = new RegExp(String.raw`(^|[^\w$])((?:[A-Za-z_][A-Za-z0-9_]*_)?(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|APIKEY|CREDENTIALS?))=(?!\*\*\*)(${WORD})`, 'gi')

// "api_key": "value" inside JSON arguments (--hf-overrides '{"token": "…"}').
const JSON_FIELD = /("[\w-]*(?:token|secret|password|passwd|api[-_]?key)"\s*:\s*")([^"]*)(")/gi

// Authorization headers written out: `Bearer xxx`, `Authorization: token xxx` / `Basic xxx`.
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/-]+=*/gi
const AUTH_HEADER = /\b(authorization\s*[:=]\s*["']?(?:token|basic)\s+)[A-Za-z0-9._~+/-]+=*/gi

// scheme://user:pass@host → scheme://***@host
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"']+@/gi

// ?token=…, &api_key=…, &X-Amz-Signature=…, &sig=…
const QUERY = /([?&][\w.-]*(?:token|key|secret|password|passwd|sig|signature|auth|credential)[\w.-]*=)[^&#\s"']+/gi

// Token shapes that are secrets wherever they appear.
const SHAPES: RegExp[] = [
  /(?<![\w-])sk-[A-Za-z0-9_-]{10,}/g, // OpenAI and compatible keys (sk-…, sk-proj-…, sk-ant-…)
  /(?<![\w-])hf_[A-Za-z0-9]{10,}(?![\w-])/g, // Hugging Face
  /(?<![\w-])gh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens: personal, OAuth, user, server (ghs_ = Actions, Apps), refresh
  /(?<![\w-])github_pat_[A-Za-z0-9_]{20,}/g, // fine-grained GitHub tokens
  /(?<![\w-])glpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g, // AWS access key ids
  /(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
]

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Keep the quotes of a quoted word, replace what is inside. */
function redactWord(word: string): string {
  const q = word[0]
  return (q === '"' || q === "'") && word.length >= 2 && word.endsWith(q) ? `${q}${REDACTED}${q}` : REDACTED
}

/**
 * `text` with every secret replaced by `***`: the `known` values (API key, GitHub token), values of
 * secret-like flags and NAME_TOKEN=/…_KEY=/…_SECRET=/…_PASSWORD= assignments, Bearer and Authorization
 * values, URL userinfo, token-like query parameters, and well-known token shapes (sk-, hf_, ghp_/ghs_, github_pat_).
 */
export function redactSecrets(text: string, known: readonly (string | null | undefined)[] = []): string {
  let out = text
  const values = [...new Set(known.filter((k): k is string => typeof k === 'string' && k.length >= MIN_KNOWN_SECRET))].sort((a, b) => b.length - a.length)
  for (const v of values) out = out.replace(new RegExp(escapeRegExp(v), 'g'), REDACTED)
  out = out.replace(USERINFO, `$1${REDACTED}@`)
  out = out.replace(QUERY, `$1${REDACTED}`)
  out = out.replace(FLAG, (all, lead: string, flag: string, sep: string, word: string) =>
    isSecretFlagName(flag.replace(/^-+/, '')) ? `${lead}${flag}${sep}${redactWord(word)}` : all,
  )
  out = out.replace(ASSIGN, (_all, lead: string, name: string, word: string) => `${lead}${name}=${redactWord(word)}`)
  out = out.replace(JSON_FIELD, `$1${REDACTED}$3`)
  out = out.replace(BEARER, `$1${REDACTED}`)
  out = out.replace(AUTH_HEADER, `$1${REDACTED}`)
  for (const shape of SHAPES) out = out.replace(shape, REDACTED)
  return out
}

/** A copy of `value` with every string in it (deeply, in arrays and objects) passed through redactSecrets. */
export function redactStrings<T>(value: T, known: readonly (string | null | undefined)[] = []): T {
  if (typeof value === 'string') return redactSecrets(value, known) as T
  if (Array.isArray(value)) return value.map((v: unknown) => redactStrings(v, known)) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactStrings(v, known)])) as T
  }
  return value
}

// Environment variables whose values are secrets by name (the same rule as NAME=value above), and the
// Action's own token inputs (INPUT_GITHUB-TOKEN).
const SECRET_ENV_NAME = /(?:^|_)(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|APIKEY|CREDENTIALS?)$|^INPUT_.*(?:TOKEN|KEY|SECRET|PASSWORD)$/i

/** Values of secret-named environment variables (8+ characters), to pass to redactSecrets as known secrets. */
export function secretValuesFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= 8 && SECRET_ENV_NAME.test(name)) out.push(value)
  }
  return out
}

// `--api-key $KEY`, `--hf-token="${HF}"`, `--token=$T`: a secret-like flag whose value is a variable.
const FLAG_VAR = /(--?[A-Za-z][\w-]*)(?:=|\s+)["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g

/**
 * Values of environment variables the command passes to secret-like flags
 * (`--api-key $VLLM_KEY`): the shell expands them, so they reach the server's
 * output as plain text and must be redacted there too. Secret-named variables
 * (HF_TOKEN, …) are covered by secretValuesFromEnv; this adds the ones whose
 * name says nothing.
 */
export function secretVariablesInCommand(command: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = []
  for (const m of command.matchAll(FLAG_VAR)) {
    const value = env[m[2]!]
    if (isSecretFlagName(m[1]!.replace(/^-+/, '')) && value !== undefined && value.length >= 4) out.push(value)
  }
  return out
}
