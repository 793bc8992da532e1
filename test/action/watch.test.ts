/**
 * mode: watch with fake stages: the tracking issue is opened, edited, closed
 * or left exactly as the verdict and fail-on say, API errors never lose the
 * verdict, and nothing is posted on a pull request.
 */
import { describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import type { EnvChange } from '../../src/gate/types.js'
import type { EventPayload } from '../../src/github/context.js'
import type { TrackedIssue } from '../../src/github/tracking-issue.js'
import { renderVerdictMarkdown } from '../../src/report/verdict-markdown.js'
import { CWD, fakeDeps, type FakeOptions } from './fake-deps.js'
import { row, verdict } from './fixtures.js'

const BASELINE = `${CWD}/baselines/gate.json`
const SCHEDULE: EventPayload = { repository: { full_name: 'acme/infer', default_branch: 'main' } }
const DRIVER: EnvChange = { field: 'driver', baseline: '570.86', candidate: '575.51', blame: 'host' }
const MARKER = '<!-- servegate-watch: gate -->'
const BOT = { login: 'github-actions[bot]', type: 'Bot' }

const watch = (o: FakeOptions = {}) =>
  fakeDeps({
    existing: [BASELINE],
    eventName: 'schedule',
    payload: SCHEDULE,
    ...o,
    env: { GITHUB_RUN_ID: '42', GITHUB_SERVER_URL: 'https://github.test', ...o.env },
    inputs: { mode: 'watch', config: 'servegate.yml', ...o.inputs },
  })

const regression = () => verdict('regression', { envChanges: [DRIVER] })
const firstLine = (body: string | null | undefined) => (body ?? '').split('\n')[0]

/** The issue a first failing watch opened, as the next run finds it. */
async function openedIssue(): Promise<TrackedIssue[]> {
  const { deps, rec } = watch({ verdicts: [regression()] })
  await run(deps)
  return rec.issues
}

describe('mode: watch, a failing verdict', () => {
  it('opens one tracking issue whose first line names the host change, and fails the step', async () => {
    const { deps, rec } = watch({ verdicts: [regression()] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list', 'create'])
    expect(rec.issues).toHaveLength(1)
    const issue = rec.issues[0]!
    expect(issue.title).toBe('servegate watch: regression on baselines/gate.json')
    expect(firstLine(issue.body)).toBe('⚠ Host changed: driver 570.86 → 575.51 since the baseline; the repository is unchanged.')
    const body = issue.body!
    expect(body).toContain('VERDICT-TABLE(regression)')
    expect(body).toMatch(/\*\*Host\*\*[^\n]*\n\n- driver: 570\.86 → 575\.51\n\n\*\*Repository\*\*[^\n]*\n\n- unchanged/)
    expect(body).toContain("#### The baseline's trend\n\n**Trend of baseline ")
    expect(body).toContain('<sub>Change points: binary segmentation')
    expect(body).toContain('[Workflow run](https://github.test/acme/infer/actions/runs/42)')
    expect(body).toContain('commit measured: [cafe](https://github.test/acme/infer/commit/cafe)')
    expect(body.trimEnd().endsWith(MARKER)).toBe(true)
    expect(rec.outputs.get('issue-number')).toBe('1')
    expect(rec.outputs.get('issue-url')).toBe('https://github.test/acme/infer/issues/1')
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(rec.failed).toEqual(['servegate watch tripped: regression in p95 ITL 128×32 c=16'])
    // The summary carries the same body, and says what happened to the issue.
    expect(firstLine(rec.summary)).toBe(firstLine(body))
    expect(rec.summary).toContain('Tracking issue: opened #1 (https://github.test/acme/infer/issues/1).')
    // No pull request: nothing is posted as a comment, and the token is the only write.
    expect(rec.commentCalls).toEqual([])
    expect(rec.warningTitles).toContain('servegate: the host changed since the baseline')
  })

  it('a second failing watch replaces the open issue’s description and comments, still one issue', async () => {
    const issues = await openedIssue()
    const { deps, rec } = watch({ issues, verdicts: [verdict('broken', { envChanges: [DRIVER], reasons: ['c=16: 12 of 24 requests failed'] })] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list', 'update 1', 'comment 1'])
    expect(rec.issues).toHaveLength(1)
    expect(rec.issues[0]!.title).toBe('servegate watch: broken on baselines/gate.json')
    expect(rec.issues[0]!.body).toContain('VERDICT-TABLE(broken)')
    expect(rec.issues[0]!.body).not.toContain('VERDICT-TABLE(regression)')
    expect(rec.issueComments).toHaveLength(1)
    expect(rec.issueComments[0]!.body).toMatch(
      /^Still failing at \[this run\]\(https:\/\/github\.test\/acme\/infer\/actions\/runs\/42\) \(for cafe · .* UTC\): \*\*broken\*\*\./,
    )
    expect(rec.issueComments[0]!.body).toContain('⚠ Host changed: driver 570.86 → 575.51')
    expect(rec.outputs.get('issue-number')).toBe('1')
    expect(rec.failed[0]).toMatch(/^servegate watch tripped: verdict broken/)
  })

  // Undecided fails whenever fail-on lists it (the default), blind or not: it is a failure like any other.
  it('undecided without a blind row fails the step under the default fail-on and updates the open issue', async () => {
    const issues = await openedIssue()
    const { deps, rec } = watch({ issues, verdicts: [verdict('undecided')] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list', 'update 1', 'comment 1'])
    expect(rec.issues).toHaveLength(1)
    expect(rec.issues[0]).toMatchObject({ state: 'open', title: 'servegate watch: undecided on baselines/gate.json' })
    expect(rec.issues[0]!.body).toContain('VERDICT-TABLE(undecided)')
    expect(rec.issueComments).toHaveLength(1)
    expect(rec.issueComments[0]!.body).toMatch(/^Still failing at \[this run\]\(https:\/\/github\.test\/acme\/infer\/actions\/runs\/42\) .*\*\*undecided\*\*\./)
    expect(rec.outputs.get('verdict')).toBe('undecided')
    expect(rec.outputs.get('issue-number')).toBe('1')
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toMatch(/^servegate watch tripped: verdict undecided/)
  })

  it('whatever else fails the step opens the issue too (unmeasured here)', async () => {
    const { deps, rec } = watch({ inputs: { 'fail-on': 'regression,broken,unmeasured' }, verdicts: [verdict('unmeasured')] })
    await run(deps)
    expect(rec.issues.map((i) => i.title)).toEqual(['servegate watch: unmeasured on baselines/gate.json'])
    expect(firstLine(rec.issues[0]!.body)).toBe(
      'Repository changed: the host is unchanged since the baseline; the repository changed: engine version 0.11.0 → 0.11.1.',
    )
    expect(rec.failed).toHaveLength(1)
  })

  it('ignores a marked issue someone else opened, a closed one, and pull requests', async () => {
    const issues: TrackedIssue[] = [
      { number: 1, title: 'copy', body: `pasted ${MARKER}`, state: 'open', user: { login: 'alice', type: 'User' } },
      { number: 2, title: 'old', body: `fixed ${MARKER}`, state: 'closed', user: BOT },
      { number: 3, title: 'a PR', body: MARKER, state: 'open', user: BOT, pull_request: {} },
    ]
    const { deps, rec } = watch({ issues, verdicts: [regression()] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list', 'create'])
    expect(rec.outputs.get('issue-number')).toBe('4')
  })
})

describe('mode: watch, a passing verdict', () => {
  it('comments "passing again" on the open issue and closes it as completed; the step passes', async () => {
    const issues = await openedIssue()
    const { deps, rec } = watch({ issues, verdicts: [verdict('pass', { envChanges: [DRIVER] })] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list', 'comment 1', 'close 1'])
    expect(rec.issues[0]).toMatchObject({ state: 'closed', state_reason: 'completed' })
    expect(rec.issueComments[0]!.body).toMatch(
      /^Passing again at \[this run\]\(https:\/\/github\.test\/acme\/infer\/actions\/runs\/42\) .*\*\*pass\*\* — sweep "gate" vs baselines\/gate\.json\./,
    )
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.outputs.get('issue-number')).toBe('1')
    expect(rec.summary).toContain('Tracking issue: #1 (https://github.test/acme/infer/issues/1) closed — passing again.')
  })

  it('does nothing when no tracking issue is open', async () => {
    const { deps, rec } = watch({ verdicts: [verdict('improvement')] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list'])
    expect(rec.outputs.has('issue-number')).toBe(false)
    expect(rec.summary).toContain('No open tracking issue: nothing to close.')
    expect(rec.failed).toEqual([])
  })
})

describe('mode: watch, neither failing nor passing', () => {
  it('undecided with a fail-on that leaves it out (not a failure) leaves the open issue as it is and says so in the summary', async () => {
    const issues = await openedIssue()
    const before = issues[0]!.body
    const { deps, rec } = watch({ issues, inputs: { 'fail-on': 'regression,broken,incomplete,unmeasured,not_comparable' }, verdicts: [verdict('undecided')] })
    await run(deps)
    expect(rec.issueCalls).toEqual(['list'])
    expect(rec.issues[0]).toMatchObject({ state: 'open', body: before })
    expect(rec.issueComments).toEqual([])
    expect(rec.summary).toContain(
      'Tracking issue: #1 (https://github.test/acme/infer/issues/1) left as it is — undecided is neither a failure under fail-on nor a pass.',
    )
    expect(rec.outputs.has('issue-number')).toBe(false)
    expect(rec.outputs.get('verdict')).toBe('undecided')
    expect(rec.failed).toEqual([])
  })

  it('a regression with fail-on never opens no issue and passes the step', async () => {
    const { deps, rec } = watch({ inputs: { 'fail-on': 'never' }, verdicts: [regression()] })
    await run(deps)
    expect(rec.issues).toEqual([])
    expect(rec.failed).toEqual([])
    expect(rec.summary).toContain('No open tracking issue, and regression opens none (not in fail-on).')
  })
})

describe('mode: watch, GitHub API errors', () => {
  it.each([
    [403, /needs "permissions: issues: write"/],
    [404, /not found/],
    [502, /GitHub's API is having trouble/],
  ])('HTTP %i is a warning and a summary note; the verdict and the failed step stand', async (status, why) => {
    const { deps, rec } = watch({ issueApiStatus: status, verdicts: [regression()] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(rec.failed).toEqual(['servegate watch tripped: regression in p95 ITL 128×32 c=16'])
    const warning = rec.warnings.find((w) => w.startsWith('servegate could not open or update the tracking issue'))
    expect(warning).toMatch(why)
    expect(rec.summary).toContain('servegate could not open or update the tracking issue')
    expect(rec.summary).toContain('VERDICT-TABLE(regression)')
    expect(rec.outputs.has('issue-number')).toBe(false)
  })
})

describe('mode: watch, refusals', () => {
  it('refuses to run for a pull request: its terms would come from the pull request', async () => {
    const pr: EventPayload = {
      pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false } }, base: { repo: { full_name: 'acme/infer', fork: false } } },
    }
    const { deps, rec } = watch({ eventName: 'pull_request', payload: pr, verdicts: [regression()] })
    await run(deps)
    expect(rec.sweeps).toEqual([])
    expect(rec.git).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.failed).toEqual([
      'servegate refuses mode watch on this pull_request event (pull request #7): an event that judges a change runs only gate, check, ab, aggregate, which take their terms from the base branch; run mode watch from the default branch (a push to it, a schedule, or a dispatch on it) and gate the change with mode gate.',
    ])
  })

  it('needs a baseline, and says so before any load is sent', async () => {
    const { deps, rec } = watch({ existing: [], verdicts: [regression()] })
    await run(deps)
    expect(rec.sweeps).toEqual([])
    expect(rec.failed[0]).toMatch(/there is no baseline at baselines\/gate\.json/)
  })
})

describe('mode: watch, what the issue may hold', () => {
  it('stays under GitHub’s 65,536-character body limit with a huge verdict table, keeping the first line and the marker', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      ...row(i % 50 === 0 ? 'regression' : 'pass', `p95 ITL 4096×512 c=${i + 1}`),
      key: `itl_p95@4096x512@c${i + 1}`,
    }))
    const { deps, rec } = watch({ verdicts: [regression()] })
    deps.stages.compareStarts = () => ({ ...regression(), rows })
    deps.stages.renderVerdictMarkdown = (v) => renderVerdictMarkdown(v)
    await run(deps)
    const body = rec.issues[0]!.body!
    expect(body.length).toBeLessThanOrEqual(65_536)
    expect(firstLine(body)).toMatch(/^⚠ Host changed: driver 570\.86 → 575\.51/)
    expect(body).toMatch(/rows of the verdict table left out to stay under GitHub's 65,536-character issue limit/)
    expect(body.trimEnd().endsWith(MARKER)).toBe(true)
  })

  it('never writes the token or the API key into the issue, its comments or the summary', async () => {
    const key = 'opaque-7c1e9b2d4f6a8e0c31'
    // A reason that quotes the key (as a server's error message might).
    const leaky = verdict('regression', { envChanges: [DRIVER], reasons: [`p95 ITL 128×32 c=16: server said "bad key ${key}"`] })
    const first = watch({ apiKey: key, verdicts: [leaky] })
    first.deps.stages.renderVerdictMarkdown = (v) => renderVerdictMarkdown(v)
    await run(first.deps)
    const again = watch({ apiKey: key, issues: first.rec.issues, verdicts: [leaky] })
    again.deps.stages.renderVerdictMarkdown = (v) => renderVerdictMarkdown(v)
    await run(again.deps)
    // The reason is there, redacted.
    expect(again.rec.issues[0]!.body).toContain('server said "bad key ***"')
    const written = [
      JSON.stringify(again.rec.issues),
      JSON.stringify(again.rec.issueComments),
      first.rec.summary,
      again.rec.summary,
      ...first.rec.written.values(),
    ]
    for (const text of written) {
      expect(text).not.toContain(key)
      expect(text).not.toContain('ghs_token123')
    }
    expect(again.rec.secrets).toEqual(expect.arrayContaining([key, 'ghs_token123']))
  })
})
