/**
 * Secrets out of every text servegate lets leave the process. A serve command,
 * a container reference, a base URL or an error message may carry an API key,
 * a Hugging Face token or credentials in a URL, and what servegate writes ends
 * up in result files, baselines, records, job summaries, PR comments, issues
 * and logs. Every one of those exits calls `redactSecrets` (or
 * `redactStrings` for a structured value): one rule, so the log masking and
 * the recorded text can never disagree about what is a secret.
 *
 * Two kinds of replacement:
 * - by context, whatever the length: the value after a flag or an assignment
 *   whose name holds a secret word, URL userinfo, Bearer values, token-like
 *   query parameters, JSON fields with a secret name, well-known token shapes;
 * - by value, for values at least MIN_KNOWN_SECRET long: the secrets the
 *   process knows (the GitHub token, the API key, values of secret-named
 *   environment variables, values found by context in a serve command), so a
 *   server log line or an error that echoes one elsewhere is caught too.
 *
 * The by-value list is the one piece of state here: `rememberSecrets` adds to
 * it as the process learns secrets, so an exit point that forgets to pass its
 * own list still redacts them.
 */

import { escapeMarkdown } from './markdown-escape.js'

export const REDACTED = '***'

const HTML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ENTITY[c]!)
}

/**
 * Known secrets shorter than this are not replaced by value: masking a 3-character
 * "key" everywhere would shred ordinary text (the same floor the log masking uses).
 */
export const MIN_KNOWN_SECRET = 8

/**
 * Words that make a name (flag, variable, JSON field, header, query parameter) hold a secret.
 * A name counts when one of its words, split on `-`, `_`, `.` and camelCase, is one of these:
 * --api-key, --master-key, --key, --basic-auth, --auth-header, HF_TOKEN, DB_PASSWORD, apiKey, --admin-pw.
 * Whole words only: --tokenizer, --max-num-batched-tokens, --ssl-keyfile, PATH and --pass-rate's
 * neighbours like --passthrough hold no secret.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  'key',
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'auth',
  'authorization',
  'apikey',
  'credential',
  'credentials',
  // --admin-pw, --ngc-pat (a personal access token), --db-pass, SMTP_PASS.
  'pw',
  'pat',
  'pass',
])

/** The words of a name: `--hf-token` → hf, token; `apiKey` → api, key; `INPUT_GITHUB-TOKEN` → input, github, token. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '')
}

/** Whether a name (flag without dashes, variable, JSON field, header) holds a secret: api-key, HF_TOKEN, basic-auth; not tokenizer. */
export function isSecretName(name: string): boolean {
  return nameWords(name).some((w) => SECRET_WORDS.has(w))
}

/** Whether a flag name (with or without dashes) holds a secret. Same rule as isSecretName. */
function isSecretFlagName(name: string): boolean {
  return isSecretName(name.replace(/^-+/, ''))
}

// A shell word: quoted (also with escaped quotes, as inside JSON text), or a run of non-space characters.
const WORD = String.raw`(?:\\"(?:[^"\\]|\\[^"])*\\"|"[^"]*"|'[^']*'|[^\s"']+)`

/** One context rule: a pattern, and from its match the replacement and the secret it hid (null: not a secret). */
interface Rule {
  re: RegExp
  apply(m: RegExpExecArray | string[]): { text: string; secret: string | null }
}

/** The quote around a quoted word (`"`, `'`, or `\\"` inside JSON text), or null. */
function quoteOf(word: string): string | null {
  for (const q of ['\\"', '"', "'"]) if (word.length >= 2 * q.length && word.startsWith(q) && word.endsWith(q)) return q
  return null
}

/** Keep the quotes of a quoted word, replace what is inside. */
function redactWord(word: string): string {
  const q = quoteOf(word)
  return q === null ? REDACTED : `${q}${REDACTED}${q}`
}

// Already redacted, as written or as markdown escaped it (`\*\*\*`): redacting an escaped report again must keep it as it is.
const ESCAPED_REDACTED = '\\*\\*\\*'
function isRedacted(word: string): boolean {
  const u = unquote(word)
  return u.startsWith(REDACTED) || u.startsWith(ESCAPED_REDACTED)
}

function unquote(word: string): string {
  const q = quoteOf(word)
  return q === null ? word : word.slice(q.length, -q.length)
}

const keep = (m: RegExpExecArray | string[]): { text: string; secret: null } => ({ text: m[0]!, secret: null })

const RULES: Rule[] = [
  // scheme://user:pass@host → scheme://***@host (the base URL, a registry, a proxy).
  {
    re: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@"']+)@/gi,
    apply: (m) => ({ text: `${m[1]}${REDACTED}@`, secret: m[2]!.includes(':') ? m[2]!.slice(m[2]!.indexOf(':') + 1) : m[2]! }),
  },
  // ?token=…, &api_key=…, &X-Amz-Signature=…, &sig=… (and &amp; where markdown or HTML escaped the URL)
  {
    re: /(&amp;|[?&])([\w.-]+)=([^&#\s"'\\]+)/g,
    apply: (m) =>
      !isRedacted(m[3]!) && (isSecretName(m[2]!) || /(?:^|[-_.])(?:sig|signature)$/i.test(m[2]!))
        ? { text: `${m[1]}${m[2]}=${REDACTED}`, secret: m[3]! }
        : keep(m),
  },
  // --flag value | --flag=value | -flag value: any flag one of whose words is a secret word.
  // A following flag is not a value: `--api-key --port 8000` keeps --port.
  {
    re: new RegExp(String.raw`(^|[\s"'(=\\])(--?[A-Za-z][\w.-]*)(=|\s+)(?!-)(${WORD})`, 'g'),
    apply: (m) => (isSecretFlagName(m[2]!) && !isRedacted(m[4]!) ? { text: `${m[1]}${m[2]}${m[3]}${redactWord(m[4]!)}`, secret: unquote(m[4]!) } : keep(m)),
  },
  // NAME=value with a secret word in NAME: HF_TOKEN=…, -e OPENAI_API_KEY=…, export DB_PASSWORD=….
  {
    re: new RegExp(String.raw`(^|[^\w$-])([A-Za-z_][A-Za-z0-9_]*)=(${WORD})`, 'g'),
    apply: (m) => (isSecretName(m[2]!) && !isRedacted(m[3]!) ? { text: `${m[1]}${m[2]}=${redactWord(m[3]!)}`, secret: unquote(m[3]!) } : keep(m)),
  },
  // "api_key": "value" inside JSON, plain or escaped inside a JSON string (--hf-overrides '{"hf_token": "…"}').
  {
    re: /(\\?")([\w.-]+)\1(\s*:\s*)\1([^"\\]*)\1/g,
    apply: (m) => (isSecretName(m[2]!) && !isRedacted(m[4]!) ? { text: `${m[1]}${m[2]}${m[1]}${m[3]}${m[1]}${REDACTED}${m[1]}`, secret: m[4]! } : keep(m)),
  },
  // A quoted header with a secret name: -H "X-Api-Key: value", 'Proxy-Authorization: Basic …'.
  {
    re: /(["'])([A-Za-z][\w-]*)(:\s*)(?:(Bearer|Basic|token)\s+)?([^"'\s]+)\1/gi,
    apply: (m) =>
      isSecretName(m[2]!) && !isRedacted(m[5]!)
        ? { text: `${m[1]}${m[2]}${m[3]}${m[4] === undefined ? '' : `${m[4]} `}${REDACTED}${m[1]}`, secret: m[5]! }
        : keep(m),
  },
  // curl's credentials: `curl -u user:pass`, `--user=user:pass` (the password after the first colon).
  // After curl only: `docker run -u 1000:1000` is a uid and a gid.
  {
    re: new RegExp(String.raw`(\bcurl\b[^\n|;&]*?\s)(-u|--user)(=|\s*)((?:\\)?["']|)([^\s"':\\]+):([^\s"']+)\4`, 'g'),
    apply: (m) => (isRedacted(m[6]!) ? keep(m) : { text: `${m[1]}${m[2]}${m[3]}${m[4]}${m[5]}:${REDACTED}${m[4]}`, secret: m[6]! }),
  },
  // A password after a login verb: `docker login -u bench -p VALUE registry`, `helm registry login … -p VALUE`.
  {
    re: new RegExp(String.raw`(\blogin\b[^\n|;&]*?\s)(-p)(=|\s+)(?!-)(${WORD})`, 'g'),
    apply: (m) => (isRedacted(m[4]!) ? keep(m) : { text: `${m[1]}${m[2]}${m[3]}${redactWord(m[4]!)}`, secret: unquote(m[4]!) }),
  },
  // Authorization headers written out: `Bearer xxx`, `Authorization: token xxx` / `Basic xxx`.
  { re: /\b(Bearer\s+)([A-Za-z0-9._~+/-]+=*)/gi, apply: (m) => (isRedacted(m[2]!) ? keep(m) : { text: `${m[1]}${REDACTED}`, secret: m[2]! }) },
  {
    re: /\b(authorization\s*[:=]\s*["']?(?:token|basic)\s+)([A-Za-z0-9._~+/-]+=*)/gi,
    apply: (m) => (isRedacted(m[2]!) ? keep(m) : { text: `${m[1]}${REDACTED}`, secret: m[2]! }),
  },
  // Token shapes that are secrets wherever they appear.
  ...[
    /(?<![\w-])sk-[A-Za-z0-9_-]{10,}/g, // OpenAI and compatible keys (sk-…, sk-proj-…, sk-ant-…)
    /(?<![\w-])hf_[A-Za-z0-9]{10,}(?![\w-])/g, // Hugging Face
    /(?<![\w-])gh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens: personal, OAuth, user, server (ghs_ = Actions, Apps), refresh
    /(?<![\w-])github_pat_[A-Za-z0-9_]{20,}/g, // fine-grained GitHub tokens
    /(?<![\w-])glpat-[A-Za-z0-9_-]{20,}/g, // GitLab
    /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g, // AWS access key ids
    /(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
    /(?<![\w-])nvapi-[A-Za-z0-9_-]{20,}/g, // NVIDIA API keys (NGC, build.nvidia.com)
  ].map((re): Rule => ({ re, apply: (m) => ({ text: REDACTED, secret: m[0]! }) })),
]

/**
 * Each rule over the whole text. A match that is no secret is not consumed: the scan goes on
 * from its next character, so `--args "--api-key X"` still finds the --api-key inside.
 */
function applyRules(text: string, found: ((secret: string) => void) | null): string {
  let out = text
  for (const rule of RULES) {
    const re = new RegExp(rule.re.source, rule.re.flags)
    let acc = ''
    let last = 0
    let m: RegExpExecArray | null
    while ((m = re.exec(out)) !== null) {
      const r = rule.apply(m)
      if (r.secret === null) {
        re.lastIndex = m.index + 1
        continue
      }
      found?.(r.secret)
      acc += out.slice(last, m.index) + r.text
      last = m.index + m[0].length
      re.lastIndex = last
    }
    out = acc + out.slice(last)
  }
  return out
}

// What the process knows to be secret, by value (see rememberSecrets).
const remembered = new Set<string>()

/**
 * Add values to the process's known secrets (values under MIN_KNOWN_SECRET, empty and
 * `$VARIABLE` references are skipped); returns the ones newly added, for the log masking
 * (core.setSecret) of the same values.
 */
export function rememberSecrets(values: Iterable<string | null | undefined>): string[] {
  const added: string[] = []
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_KNOWN_SECRET || v.startsWith('$') || v === REDACTED || remembered.has(v)) continue
    remembered.add(v)
    added.push(v)
  }
  return added
}

/** Forget every known secret (tests; a long-lived process between unrelated jobs). */
export function forgetSecrets(): void {
  remembered.clear()
}

/**
 * The one redaction: `text` with every secret replaced by `***` — the `known` values and the
 * remembered ones (at least MIN_KNOWN_SECRET long), then by context the values of secret-named
 * flags, assignments, JSON fields and headers, Bearer and Authorization values, URL userinfo,
 * token-like query parameters, curl's `-u user:pass`, `-p VALUE` after a login verb and well-known
 * token shapes (sk-, hf_, ghp_/ghs_, github_pat_, nvapi-).
 */
export function redactSecrets(text: string, known: readonly (string | null | undefined)[] = []): string {
  let out = text
  const values = new Set(remembered)
  for (const k of known) if (typeof k === 'string' && k.length >= MIN_KNOWN_SECRET && k !== REDACTED) values.add(k)
  for (const v of [...values].sort((a, b) => b.length - a.length)) {
    // As written, and as it appears once escaped: in JSON text, in markdown (a comment or summary
    // renders a server's message escaped before it leaves) and in HTML.
    for (const form of new Set([v, JSON.stringify(v).slice(1, -1), escapeMarkdown(v), escapeHtml(v)])) out = out.split(form).join(REDACTED)
  }
  return applyRules(out, null)
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

/**
 * The secret values a text carries by context (a serve command's `--api-key VALUE`,
 * `HF_TOKEN=…`, URL credentials, a Bearer token): the same rules redactSecrets replaces,
 * so what the log masking hides and what the recorded text hides are one set. Values
 * under MIN_KNOWN_SECRET and `$VARIABLE` references are left out.
 */
export function secretsInText(text: string): string[] {
  const out = new Set<string>()
  applyRules(text, (s) => {
    if (s.length >= MIN_KNOWN_SECRET && !s.startsWith('$') && s !== REDACTED) out.add(s)
  })
  return [...out]
}

/**
 * Values of environment variables that are secrets by name (a word of the name is a secret word:
 * HF_TOKEN, OPENAI_API_KEY, ACTIONS_RUNTIME_TOKEN, INPUT_GITHUB-TOKEN), and credentials in URLs any
 * variable holds (a proxy, a package index), at least MIN_KNOWN_SECRET long.
 */
export function secretValuesFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const out = new Set<string>()
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (value.length >= MIN_KNOWN_SECRET && isSecretName(name)) out.add(value)
    if (value.includes('@')) for (const s of secretsInText(value)) out.add(s)
  }
  return [...out]
}

// `--api-key $KEY`, `--hf-token="${HF}"`, `--token=$T`: a secret-like flag whose value is a variable.
const FLAG_VAR = /(--?[A-Za-z][\w.-]*)(?:=|\s+)["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g

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
    if (isSecretFlagName(m[1]!) && value !== undefined && value.length >= MIN_KNOWN_SECRET) out.push(value)
  }
  return out
}
