/**
 * The Action's exits, redacted in one place. Everything the Action lets leave
 * the process goes through `deps`: log lines, annotations, step outputs, the
 * job summary, files it writes (the run record, reports), PR comments and the
 * tracking issue. Wrapping those once means no code path can forget to call
 * the redaction (util/redact.ts), and the log masking (core.setSecret) is
 * given exactly the values the redaction replaces by value.
 */
import { jsonText } from '../store/atomic-write.js'
import { MIN_KNOWN_SECRET, redactSecrets, rememberSecrets, secretValuesFromEnv } from '../util/redact.js'
import type { ActionDeps } from './deps.js'
import type { GitHubClient } from './publish.js'

/** Text for a file: JSON redacted string by string (a digit-only secret must not break it), anything else as text. */
function redactFileText(path: string, text: string): string {
  if (/\.json$/i.test(path)) {
    try {
      return jsonText(JSON.parse(text))
    } catch {
      // Not JSON after all: redact it as text.
    }
  }
  return redactSecrets(text)
}

function redactingClient(client: GitHubClient): GitHubClient {
  const r = (s: string): string => redactSecrets(s)
  const { comments, issues } = client
  return {
    identity: () => client.identity(),
    comments: {
      listComments: (n) => comments.listComments(n),
      createComment: (n, body) => comments.createComment(n, r(body)),
      updateComment: (id, body) => comments.updateComment(id, r(body)),
    },
    issues: {
      listOpenIssues: () => issues.listOpenIssues(),
      createIssue: (title, body) => issues.createIssue(r(title), r(body)),
      updateIssue: (n, title, body) => issues.updateIssue(n, r(title), r(body)),
      addComment: (n, body) => issues.addComment(n, r(body)),
      closeIssue: (n) => issues.closeIssue(n),
    },
  }
}

/**
 * `deps` with every exit redacted. The values of the job's secret-named variables
 * (ACTIONS_RUNTIME_TOKEN, an HF_TOKEN, the API key's variable) are known secrets
 * from the start; `core.setSecret` adds to them and masks the same values in the log.
 */
export function redactingDeps(deps: ActionDeps): ActionDeps {
  const { core } = deps
  const r = (s: string): string => redactSecrets(s)
  // Masked once per value (each mask is a line of the log); remembered for the by-value redaction.
  const masked = new Set<string>()
  const setSecret = (secret: string): void => {
    rememberSecrets([secret])
    if (secret.length < MIN_KNOWN_SECRET || masked.has(secret)) return
    masked.add(secret)
    core.setSecret(secret)
  }
  for (const v of secretValuesFromEnv(deps.env)) setSecret(v)
  return {
    ...deps,
    core: {
      getInput: (name) => core.getInput(name),
      getState: (name) => core.getState(name),
      saveState: (name, value) => core.saveState(name, value),
      setSecret,
      setOutput: (name, value) => core.setOutput(name, r(value)),
      setFailed: (message) => core.setFailed(r(message)),
      info: (message) => core.info(r(message)),
      warning: (message, opts) => core.warning(r(message), opts?.title === undefined ? opts : { ...opts, title: r(opts.title) }),
      error: (message) => core.error(r(message)),
      appendSummary: (markdown) => core.appendSummary(r(markdown)),
    },
    github: (token) => {
      setSecret(token)
      return redactingClient(deps.github(token))
    },
    files: {
      exists: (path) => deps.files.exists(path),
      writeText: (path, text) => deps.files.writeText(path, redactFileText(path, text)),
    },
  }
}
