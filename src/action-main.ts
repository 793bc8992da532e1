/** The Action's entry (bundled to dist/index.js): build the real dependencies and run. */
import { run } from './action.js'
import { realActionDeps } from './github/real-deps.js'

await run(realActionDeps())
