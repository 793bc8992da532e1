#!/usr/bin/env node
/**
 * Bundle servegate into dist/ with esbuild: one self-contained ESM file per
 * entry, every dependency inlined, so the Action runs without `npm install`.
 * The output is deterministic (no timestamps, no metafile, no absolute paths)
 * so `scripts/check-dist.sh` can compare it byte for byte with the committed dist/.
 */
import { build } from 'esbuild'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')

// output name (without .js) → source. Only entries whose source exists are built.
const ENTRIES = {
  index: 'src/action-main.ts',
  post: 'src/action-post-main.ts',
  cli: 'src/cli.ts',
  'load-worker': 'src/load/worker.ts',
}

// The HTML report inlines Chart.js and its error-bar module (src/store/html-assets.ts reads them from
// node_modules). The Action has no node_modules: swap that module for one holding the same text, taken
// from the locked packages, so the output stays deterministic.
const requireHere = createRequire(import.meta.url)
function chartScriptsModule() {
  const dirOf = (pkg) => dirname(requireHere.resolve(pkg))
  const version = (pkg) => JSON.parse(readFileSync(join(dirOf(pkg), '..', 'package.json'), 'utf8')).version
  const scripts = {
    chartJs: readFileSync(join(dirOf('chart.js'), 'chart.umd.min.js'), 'utf8'),
    errorBars: readFileSync(join(dirOf('chartjs-chart-error-bars'), 'index.umd.min.js'), 'utf8'),
    notice: `chart.js ${version('chart.js')} (MIT) · chartjs-chart-error-bars ${version('chartjs-chart-error-bars')} (MIT)`,
  }
  return `const SCRIPTS = ${JSON.stringify(scripts)};\nexport function chartScripts() { return SCRIPTS; }\n`
}
const inlineChartScripts = {
  name: 'inline-chart-scripts',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]store[\\/]html-assets\.ts$/ }, () => ({
      contents: chartScriptsModule(),
      loader: 'js',
      resolveDir: join(root, 'src', 'store'),
    }))
  },
}

const entryPoints = {}
for (const [out, src] of Object.entries(ENTRIES)) {
  if (existsSync(join(root, src))) entryPoints[out] = src
  else console.warn(`bundle: skipping dist/${out}.js (${src} does not exist)`)
}
if (Object.keys(entryPoints).length === 0) {
  console.error('bundle: no entry exists; nothing to build')
  process.exit(1)
}

// dist/ is generated: start from empty so a removed entry cannot leave a stale file behind.
rmSync(dist, { recursive: true, force: true })
mkdirSync(dist, { recursive: true })

// One build per entry: each file is self-contained, and a broken entry does not stop the others.
const failed = []
for (const [out, src] of Object.entries(entryPoints)) {
  try {
    await build({
      absWorkingDir: root,
      entryPoints: { [out]: src },
      outdir: 'dist',
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      charset: 'utf8',
      legalComments: 'eof',
      sourcemap: false,
      metafile: false,
      logLevel: 'warning',
      plugins: [inlineChartScripts],
      // Some inlined dependencies are CommonJS and call require(): give the ESM bundle one.
      banner: {
        js: "import { createRequire as __servegateCreateRequire } from 'node:module';\nconst require = __servegateCreateRequire(import.meta.url);",
      },
    })
  } catch {
    // esbuild has already printed each error with its file and line.
    failed.push(`dist/${out}.js`)
  }
}

// The bundles are ESM with a .js name: say so beside them, whatever package.json the action is run from.
writeFileSync(join(dist, 'package.json'), '{\n  "type": "module"\n}\n')
const built = Object.keys(entryPoints)
  .map((n) => `dist/${n}.js`)
  .filter((f) => !failed.includes(f))
console.log(`bundle: built ${built.join(', ') || 'nothing'}`)
if (failed.length > 0) {
  console.error(`bundle: failed to build ${failed.join(', ')}`)
  process.exit(1)
}
