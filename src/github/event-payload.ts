/**
 * The parts of a GitHub event payload servegate reads. Everything is optional:
 * payloads vary by event, and a field GitHub leaves out must read as unknown,
 * never as a default that trusts the run.
 */

export type RepoRef = { full_name?: string; fork?: boolean } | null

/** The parts of a GitHub event payload servegate reads (everything optional: payloads vary). */
export interface EventPayload {
  /** push and workflow_dispatch: the ref the run is on (`refs/heads/NAME`, `refs/tags/NAME`). */
  ref?: string
  pull_request?: {
    number?: number
    head?: { repo?: RepoRef; sha?: string; ref?: string }
    base?: { repo?: RepoRef; sha?: string; ref?: string }
  }
  /** issue_comment: the issue (a pull request when `pull_request` is present) and the comment. */
  issue?: { number?: number; pull_request?: object | null }
  comment?: { author_association?: string; user?: { login?: string } | null }
  /** workflow_run: the run that triggered this one; its code came from head_repository. */
  workflow_run?: {
    event?: string
    head_sha?: string
    head_branch?: string
    head_repository?: RepoRef
    repository?: RepoRef
    pull_requests?: Array<{ number?: number; head?: { sha?: string; ref?: string }; base?: { sha?: string; ref?: string } }>
  }
  repository?: { full_name?: string; default_branch?: string }
  /** merge_group: the queue's temporary branch (head) and the branch it merges into (base). */
  merge_group?: { head_sha?: string; head_ref?: string; base_sha?: string; base_ref?: string }
}
