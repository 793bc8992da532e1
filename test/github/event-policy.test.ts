import { describe, expect, it } from 'vitest'
import { readRunContext, type EventPayload } from '../../src/github/context.js'
import { judgedChange, modeRefusal } from '../../src/github/event-policy.js'
import { MODES } from '../../src/github/inputs.js'

const REPO = { full_name: 'acme/infer', default_branch: 'main' }
const env = { GITHUB_REPOSITORY: 'acme/infer', GITHUB_REF: 'refs/heads/main' }
const PR: EventPayload = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer' } }, base: { repo: { full_name: 'acme/infer' }, ref: 'main', sha: 'b'.repeat(40) } },
  repository: REPO,
}
const QUEUE: EventPayload = {
  merge_group: { head_sha: 'c'.repeat(40), head_ref: 'refs/heads/gh-readonly-queue/main/pr-9-abc', base_sha: 'b'.repeat(40), base_ref: 'refs/heads/main' },
  repository: REPO,
}

describe('which events judge a change', () => {
  it('judges every pull request, the merge queue and a comment on a pull request', () => {
    expect(judgedChange('pull_request', PR, env)).toBe('pull request #7')
    expect(judgedChange('pull_request_target', PR, env)).toBe('pull request #7')
    expect(judgedChange('pull_request', { repository: REPO }, env)).toBe('a pull request')
    expect(judgedChange('merge_group', QUEUE, env)).toBe("the merge queue's branch gh-readonly-queue/main/pr-9-abc")
    expect(judgedChange('issue_comment', { issue: { number: 4, pull_request: {} }, repository: REPO }, env)).toBe('pull request #4')
  })

  it('judges a push or a dispatch on any ref but the default branch, and one whose default branch it cannot tell', () => {
    expect(judgedChange('push', { ref: 'refs/heads/main', repository: REPO }, env)).toBeNull()
    expect(judgedChange('workflow_dispatch', { ref: 'refs/heads/main', repository: REPO }, env)).toBeNull()
    expect(judgedChange('push', { ref: 'refs/heads/fix', repository: REPO }, env)).toBe('branch fix, not the default branch main')
    expect(judgedChange('push', { ref: 'refs/tags/v1.2.0', repository: REPO }, env)).toBe('tag v1.2.0, not the default branch main')
    // The payload's ref wins over GITHUB_REF; without one, GITHUB_REF says where the run is.
    expect(judgedChange('workflow_dispatch', { repository: REPO }, { ...env, GITHUB_REF: 'refs/heads/fix' })).toBe('branch fix, not the default branch main')
    expect(judgedChange('workflow_dispatch', { repository: REPO }, env)).toBeNull()
    expect(judgedChange('push', { ref: 'refs/heads/main' }, env)).toBe('branch main, and the event names no default branch')
    expect(judgedChange('issue_comment', { issue: { number: 5 }, repository: REPO }, env)).toBeNull()
  })

  it('never judges a schedule: GitHub runs it on the default branch', () => {
    expect(judgedChange('schedule', {}, env)).toBeNull()
  })

  it('judges a workflow_run for a pull request, the merge queue, a fork or another branch; not one of the default branch', () => {
    const wr = (w: NonNullable<EventPayload['workflow_run']>): EventPayload => ({ workflow_run: w, repository: REPO })
    const ours = { head_repository: { full_name: 'acme/infer' }, repository: { full_name: 'acme/infer' } }
    expect(judgedChange('workflow_run', wr({ ...ours, event: 'push', head_branch: 'main' }), env)).toBeNull()
    expect(judgedChange('workflow_run', wr({ ...ours, event: 'pull_request', head_branch: 'fix', pull_requests: [{ number: 3 }] }), env)).toBe(
      'a run for pull request #3',
    )
    expect(judgedChange('workflow_run', wr({ ...ours, event: 'pull_request', head_branch: 'main' }), env)).toBe('a pull_request run of main')
    expect(judgedChange('workflow_run', wr({ ...ours, event: 'merge_group', head_branch: 'gh-readonly-queue/main/x' }), env)).toBe(
      'a merge_group run of gh-readonly-queue/main/x',
    )
    expect(judgedChange('workflow_run', wr({ event: 'push', head_branch: 'main', head_repository: { full_name: 'mallory/infer' } }), env)).toBe(
      'a run of main from mallory/infer',
    )
    expect(judgedChange('workflow_run', wr({ ...ours, event: 'push', head_branch: 'fix' }), env)).toBe('a run of branch fix, not the default branch main')
    expect(judgedChange('workflow_run', { repository: REPO }, env)).toBe('a triggering run the event does not describe')
  })

  it('is in the run context', () => {
    expect(readRunContext('merge_group', QUEUE, env).judging).toBe("the merge queue's branch gh-readonly-queue/main/pr-9-abc")
    expect(readRunContext('schedule', { repository: REPO }, env).judging).toBeNull()
  })

  it("takes a push's terms from the default branch, as a dispatch's", () => {
    expect(readRunContext('push', { ref: 'refs/heads/fix', repository: REPO }, env).base).toEqual({ sha: null, ref: 'main' })
  })
})

describe('the modes an event that judges a change may run', () => {
  it('runs gate, check, ab and aggregate on it, and refuses full, refresh and watch in one line naming the event and the mode', () => {
    const runs = MODES.filter((m) => modeRefusal(m, 'pull_request', 'pull request #7') === null)
    expect(runs).toEqual(['gate', 'check', 'ab', 'aggregate'])
    expect(modeRefusal('full', 'pull_request', 'pull request #7')).toBe(
      'servegate refuses mode full on this pull_request event (pull request #7): an event that judges a change runs only gate, check, ab, aggregate, which take their terms from the base branch; run mode full from the default branch (a push to it, a schedule, or a dispatch on it) and gate the change with mode gate.',
    )
    expect(modeRefusal('watch', 'merge_group', judgedChange('merge_group', QUEUE, env))).toMatch(
      /^servegate refuses mode watch on this merge_group event \(the merge queue's branch gh-readonly-queue\/main\/pr-9-abc\): /,
    )
    expect(modeRefusal('refresh', 'push', 'branch fix, not the default branch main')).toMatch(
      /^servegate refuses mode refresh on this push event \(branch fix, not the default branch main\): /,
    )
  })

  it('runs every mode on an event that judges no change', () => {
    for (const m of MODES) expect(modeRefusal(m, 'push', null)).toBeNull()
  })
})
