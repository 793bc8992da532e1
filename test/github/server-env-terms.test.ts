import { describe, expect, it } from 'vitest'
import type { ConfigFile } from '../../src/config/schema.js'
import { withBaseTerms } from '../../src/github/base-terms.js'

// server.env decides which of the runner's variables a serve command sees: a pull request must not widen it.
describe('server.env comes from the base branch', () => {
  const base: ConfigFile = { server: { command: 'old-engine --port {port}', env: ['HF_HOME_EXTRA'] } }

  it("drops names the pull request adds and keeps the base branch's list", () => {
    const pr: ConfigFile = { server: { command: 'new-engine --port {port}', env: ['HF_HOME_EXTRA', 'OPENAI_API_KEY', 'HF_TOKEN'] } }
    const out = withBaseTerms(pr, base)
    expect(out?.server?.env).toEqual(['HF_HOME_EXTRA'])
    // The engine under test is still the pull request's.
    expect(out?.server?.command).toBe('new-engine --port {port}')
  })

  it('passes nothing extra when the base branch lists nothing, whatever the pull request says', () => {
    expect(withBaseTerms({ server: { env: ['HF_TOKEN'] } }, { server: {} })?.server?.env).toBeUndefined()
    expect(withBaseTerms({ server: { env: ['HF_TOKEN'] } }, null)?.server?.env).toBeUndefined()
  })

  it("keeps the base branch's list when the pull request's config drops its server block", () => {
    expect(withBaseTerms({}, base)?.server?.env).toEqual(['HF_HOME_EXTRA'])
  })
})
