/** The Action's post entry (bundled to dist/post.js): report a main step that was killed before it could. */
import { runPost } from './action-post.js'
import { realActionDeps } from './github/real-deps.js'

await runPost(realActionDeps())
