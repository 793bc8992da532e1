import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { configForResult, resolveConfig } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'
import { buildVerdictRecord } from '../../src/gate/record.js'
import type { Baseline } from '../../src/gate/types.js'
import type { ActionDeps } from '../../src/github/deps.js'
import type { GitHubClient } from '../../src/github/publish.js'
import { redactingDeps } from '../../src/github/redacting-deps.js'
import { commitBaseline, type GitRunner } from '../../src/github/refresh-commit.js'
import { statusCommentBody } from '../../src/github/status-comment.js'
import { escapeMarkdown } from '../../src/util/markdown-escape.js'
import { baselineText } from '../../src/store/baseline.js'
import { jsonText } from '../../src/store/atomic-write.js'
import { forgetSecrets, redactSecrets, rememberSecrets } from '../../src/util/redact.js'

// A secret as a generator of realistic values: no spaces or quotes (the shell would split or end
// it), never starting with "-" (a value after a flag that starts with a dash is the next flag).
const SECRET = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.~+/=-]{7,39}$/)
// Userinfo in a URL cannot hold "/", "=" or "+" unencoded.
const URL_SECRET = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.~-]{7,31}$/)

const SECRET_FLAGS = [
  'api-key',
  'master-key',
  'admin-key',
  'license-key',
  'key',
  'basic-auth',
  'auth-header',
  'hf-token',
  'password',
  'client-secret',
  'access-token',
  'api_key',
  'admin-pw',
  'ngc-pat',
  'pass',
]
const SECRET_VARS = ['HF_TOKEN', 'OPENAI_API_KEY', 'DB_PASSWORD', 'MY_SECRET', 'HUGGING_FACE_HUB_TOKEN', 'GITHUB_TOKEN', 'AUTH']
const QUOTES = ['', '"', "'"]

/** Every shape and place a secret takes in a serve command servegate is given. */
const PLACED: fc.Arbitrary<{ secret: string; place: string }> = fc.oneof(
  // --flag value, --flag=value, quoted or not.
  fc
    .record({ secret: SECRET, flag: fc.constantFrom(...SECRET_FLAGS), sep: fc.constantFrom(' ', '=', '  '), q: fc.constantFrom(...QUOTES) })
    .map(({ secret, flag, sep, q }) => ({ secret, place: `--${flag}${sep}${q}${secret}${q}` })),
  // NAME=value, bare, after -e, export or --env.
  fc
    .record({
      secret: SECRET,
      name: fc.constantFrom(...SECRET_VARS),
      lead: fc.constantFrom('', '-e ', 'export ', '--env ', 'env '),
      q: fc.constantFrom(...QUOTES),
    })
    .map(({ secret, name, lead, q }) => ({ secret, place: `${lead}${name}=${q}${secret}${q}` })),
  // Credentials in a URL: user:password@ and token@.
  fc
    .record({ secret: URL_SECRET, withUser: fc.boolean(), scheme: fc.constantFrom('http', 'https', 'docker') })
    .map(({ secret, withUser, scheme }) => ({ secret, place: `--registry ${scheme}://${withUser ? 'bench:' : ''}${secret}@127.0.0.1:5000/v1` })),
  // JSON inside the command, compact or spaced.
  fc
    .record({ secret: SECRET, field: fc.constantFrom('hf_token', 'api_key', 'apiKey', 'password', 'auth'), spaced: fc.boolean() })
    .map(({ secret, field, spaced }) => ({
      secret,
      place: spaced ? `--hf-overrides '{"${field}": "${secret}", "revision": "main"}'` : `--extra-config '{"revision":"main","${field}":"${secret}"}'`,
    })),
  // A token in a query string and in headers.
  fc
    .record({ secret: URL_SECRET, param: fc.constantFrom('access_token', 'api_key', 'token', 'X-Amz-Signature') })
    .map(({ secret, param }) => ({ secret, place: `--model-url "http://127.0.0.1:9/m?page=2&${param}=${secret}"` })),
  fc
    .record({ secret: URL_SECRET, header: fc.constantFrom('X-Api-Key: ', 'Authorization: Bearer ', 'Proxy-Authorization: Basic ', 'Auth-Token: ') })
    .map(({ secret, header }) => ({ secret, place: `--header "${header}${secret}"` })),
  // curl's user:password, and a password after a login verb, in a command chained to the engine's.
  fc
    .record({ secret: SECRET, flag: fc.constantFrom('-u ', '-u', '--user ', '--user='), q: fc.constantFrom('', '"', "'") })
    .map(({ secret, flag, q }) => ({ secret, place: `&& curl -s ${flag}${q}admin:${secret}${q} http://127.0.0.1:9/health &&` })),
  fc
    .record({
      secret: SECRET,
      verb: fc.constantFrom('docker login -u bench', 'podman login nvcr.io -u bench', 'helm registry login r.example'),
      q: fc.constantFrom(...QUOTES),
    })
    .map(({ secret, verb, q }) => ({ secret, place: `; ${verb} -p ${q}${secret}${q} nvcr.io;` })),
  // An NVIDIA API key wherever it stands.
  fc.stringMatching(/^[A-Za-z0-9_-]{40,64}$/).map((tail) => ({ secret: `nvapi-${tail}`, place: `--model-source ngc:nvapi-${tail}` })),
)

const BEFORE = fc.constantFrom(
  'vllm serve org/model --port {port}',
  'docker run --rm --gpus all -p {port}:8000 vllm/vllm-openai --model org/m',
  'python -m sglang.launch_server --model-path m --port {port}',
)
const AFTER = fc.constantFrom('', '--max-num-batched-tokens 8192 --tokenizer org/tok', '--tensor-parallel-size 2 --ssl-keyfile /k.pem', '; exec sleep 1')

const CASE = fc
  .record({ placed: PLACED, before: BEFORE, after: AFTER })
  .map(({ placed, before, after }) => ({ secret: placed.secret, command: `${before} ${placed.place} ${after}`.trim(), ordinary: `${before} ${after}` }))
  // A "secret" that is a piece of the ordinary text around it would be found there, not leaked.
  .filter((c) => !c.ordinary.includes(c.secret) && !'***'.includes(c.secret))

/** Fake Action deps that record everything the Action lets out. */
function capture(): { deps: ActionDeps; out: string[] } {
  const out: string[] = []
  const push = (...s: string[]): void => void out.push(...s)
  const client: GitHubClient = {
    identity: async () => null,
    comments: {
      listComments: async function* () {},
      createComment: async (_n, body) => (push(body), { id: 1, body }),
      updateComment: async (_id, body) => (push(body), { id: 1, body }),
    },
    issues: {
      listOpenIssues: async function* () {},
      createIssue: async (title, body) => (push(title, body), { number: 1, title, body }),
      updateIssue: async (n, title, body) => (push(title, body), { number: n, title, body }),
      addComment: async (_n, body) => (push(body), { id: 1 }),
      closeIssue: async (n) => ({ number: n, title: '', body: '' }),
    },
  }
  const deps = {
    core: {
      getInput: () => '',
      setOutput: (_n: string, v: string) => push(v),
      setFailed: (m: string) => push(m),
      setSecret: () => undefined,
      info: (m: string) => push(m),
      warning: (m: string, o?: { title?: string }) => push(m, o?.title ?? ''),
      error: (m: string) => push(m),
      appendSummary: async (m: string) => push(m),
      saveState: () => undefined,
      getState: () => '',
    },
    env: {},
    cwd: '/tmp',
    event: { name: 'pull_request', payload: {} },
    github: () => client,
    stages: {} as ActionDeps['stages'],
    git: (async () => ({ code: 0, stdout: '', stderr: '' })) as GitRunner,
    files: { exists: () => false, writeText: async (_p: string, t: string) => push(t) },
  } as unknown as ActionDeps
  return { deps, out }
}

function expectClean(texts: readonly string[], secret: string, where: string): void {
  for (const t of texts) if (t.includes(secret)) throw new Error(`${where}: the secret ${JSON.stringify(secret)} survived in:\n${t}`)
}

afterEach(() => forgetSecrets())

describe('one redaction over every output', () => {
  it('finds every secret by context alone, in any shape and place', () => {
    fc.assert(
      fc.property(CASE, ({ secret, command }) => {
        expectClean(
          [redactSecrets(command), redactSecrets(escapeMarkdown(command)), redactSecrets(JSON.stringify({ serve_command: command }))],
          secret,
          'context',
        )
      }),
      { numRuns: 400 },
    )
  })

  it('leaves no secret in result files, baselines, records, comments, issues, summaries, logs, errors or commits', async () => {
    await fc.assert(
      fc.asyncProperty(CASE, async ({ secret, command }) => {
        forgetSecrets()
        // The serve command as the config gives it: resolving it records it redacted and learns its secrets.
        const cfg = resolveConfig({ file: { server: { command } }, filePath: 'servegate.yml', flags: { out: '/tmp/r.json' }, env: {} })
        rememberSecrets(cfg.secrets ?? [])
        // A server log or error that echoes the raw command: caught by value wherever it goes.
        const echoed = `engine started with: ${command}`

        const result = jsonText({ config: configForResult(cfg), env: { serve_command: cfg.serveCommand }, points: [{ runs: [{ errors: [echoed] }] }] })
        const baseline = baselineText({
          schema: 'servegate.baseline/v1',
          runs: [{ env: { serve_command: cfg.serveCommand }, note: echoed }],
        } as unknown as Baseline)
        const record = JSON.stringify(
          buildVerdictRecord({
            label: 'gate',
            outcome: 'error',
            detail: `servegate could not run: ${echoed}`,
            mode: 'gate',
            sweep: null,
            comparedWith: null,
            verdict: null,
            env: null,
            runner: { name: null, os: null, arch: null, labels: null },
            job: { run_url: null, job: null, run_attempt: null },
            headSha: null,
            at: '2025-01-01T00:00:00Z',
            harnessVersion: '0',
          }),
        )
        const status = statusCommentBody('error', { headSha: null, at: '2025-01-01T00:00:00Z', runAttempt: null, runUrl: null }, echoed)
        expectClean([result, baseline, record, status], secret, 'recorded')
        expect(JSON.parse(result)).toBeTypeOf('object')

        // The Action's exits, through the one wrapper.
        const { deps, out } = capture()
        const d = redactingDeps(deps)
        d.core.info(echoed)
        d.core.warning(echoed, { title: echoed })
        d.core.error(echoed)
        d.core.setFailed(`servegate could not run: ${echoed}`)
        d.core.setOutput('detail', echoed)
        await d.core.appendSummary(`## servegate\n\n| serve | ${escapeMarkdown(command)} |\n\n\`\`\`\n${command}\n\`\`\`\n`)
        const gh = d.github('ghs_0123456789abcdefghijABCDEFGHIJ')
        await gh.comments.createComment(1, `| command | ${escapeMarkdown(command)} |`)
        await gh.comments.updateComment(1, echoed)
        await gh.issues.createIssue(`regression: ${command}`, echoed)
        await gh.issues.addComment(1, echoed)
        await d.files.writeText('/tmp/servegate-record.json', `${JSON.stringify({ detail: echoed, env: { serve_command: command } }, null, 2)}\n`)
        await d.files.writeText('/tmp/servegate-result.md', `# report\n\n${escapeMarkdown(command)}\n`)
        expectClean(out, secret, 'action')

        // A refresh commit's message.
        const args: string[][] = []
        const git: GitRunner = async (a) => (args.push([...a]), { code: a[0] === 'diff' ? 1 : 0, stdout: a[0] === 'rev-parse' ? 'abc\n' : 'x', stderr: '' })
        await commitBaseline(git, {
          cwd: '/tmp',
          path: 'baselines/gate.json',
          message: `servegate: refresh (${echoed})`,
          push: false,
          rebuild: () => {
            throw new Error('not pushed')
          },
        })
        expectClean(args.flat(), secret, 'commit')
      }),
      { numRuns: 150 },
    )
  })

  it('never echoes credentials of a refused base URL, on the CLI or in the Action', async () => {
    const { main } = await import('../../src/cli.js')
    await fc.assert(
      fc.asyncProperty(URL_SECRET, fc.constantFrom('bench:', ''), async (secret, user) => {
        forgetSecrets()
        const url = `http://${user}${secret}@127.0.0.1:1`
        let err: unknown
        try {
          resolveConfig({ file: null, filePath: null, flags: { baseUrl: url }, env: {} })
        } catch (e) {
          err = e
        }
        expect(err).toBeInstanceOf(UsageError)
        expectClean([(err as UsageError).message], secret, 'resolve')
        const written: string[] = []
        const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true))
        try {
          await main(['node', 'servegate', 'run', '--base-url', url, '--out', '/tmp/servegate-fuzz-never.json'])
        } finally {
          spy.mockRestore()
        }
        expect(written.join('')).toMatch(/credentials/)
        expectClean(written, secret, 'cli stderr')
      }),
      { numRuns: 25 },
    )
    process.exitCode = 0
  })
})
