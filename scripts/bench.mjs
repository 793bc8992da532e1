// Runs each benchmark under bench/ as its own process, one after another, so
// they never compete for the cores they measure. `npm run bench -- NAME`
// runs only the benchmarks whose file name contains NAME.
import { readdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const filter = process.argv[2] ?? ''
const files = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts') && f.includes(filter))
  .sort()
let failed = 0
for (const f of files) {
  process.stdout.write(`\n=== bench/${f}\n`)
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join('bench', f)], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exit(failed > 0 ? 1 : 0)
