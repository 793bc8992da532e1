import { describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { CWD, fakeDeps } from './fake-deps.js'
import { verdict } from './fixtures.js'

describe('the Action and the HTML report', () => {
  it('writes the self-contained page beside the markdown report and names it in html-path', async () => {
    const { deps, rec } = fakeDeps({ existing: [`${CWD}/baselines/gate.json`], inputs: { config: 'servegate.yml' }, verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.outputs.get('html-path')).toBe(`${CWD}/servegate-result.html`)
    const page = rec.written.get(`${CWD}/servegate-result.html`)!
    expect(page).toMatch(/^<!DOCTYPE html>/)
    expect(page).toContain('Verdict: REGRESSION')
    // Chart.js travels inside the page: the artifact opens offline.
    expect(page).toContain('Chart.js v4')
    expect(page).toContain('<canvas id="frontier-0" data-kind="frontier"')
  })
})
