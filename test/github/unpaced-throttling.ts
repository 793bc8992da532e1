/**
 * Octokit's throttling plugin, without its pacing of writes. The plugin spaces every write 1 s
 * from the last and every write that notifies someone (a new issue, a comment) 3 s, in queues
 * shared by every client in the process: a courtesy to GitHub, which the stand-in on 127.0.0.1
 * does not need, and most of these tests' wall time. What the tests are about stays the plugin's
 * own: its answer to a 403 or 429 rate limit (retry-after, x-ratelimit-reset, the retry count).
 *
 *   vi.mock('@octokit/plugin-throttling', async (original) => (await import('./unpaced-throttling.js')).unpaced(original))
 */
import type * as Throttling from '@octokit/plugin-throttling'

type Job = (...args: unknown[]) => unknown

/** A stand-in for one of the plugin's Bottleneck groups that runs each job at once. */
const atOnce = { key: () => ({ schedule: async (_opts: unknown, job: Job, ...args: unknown[]) => job(...args) }) }

/** The module with `throttling` handing the plugin the stand-in for its write and notification queues. */
export async function unpaced(original: () => Promise<typeof Throttling>): Promise<typeof Throttling> {
  const mod = await original()
  const throttling = ((octokit, options) =>
    mod.throttling(octokit, { ...options, throttle: { ...options.throttle, write: atOnce, notifications: atOnce } } as never)) as typeof mod.throttling
  return { ...mod, throttling: Object.assign(throttling, { VERSION: mod.throttling.VERSION, triggersNotification: mod.throttling.triggersNotification }) }
}
