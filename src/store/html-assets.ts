/**
 * The chart library the HTML report inlines: Chart.js and its error-bar
 * module, as their UMD builds' text, so the page needs no network when viewed.
 * From the sources this reads the installed packages; scripts/bundle.mjs
 * replaces this module with one holding the same text, so the Action and the
 * bundled CLI (which run without node_modules) write the same page.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** The report's ChartScripts (report/html.ts), spelled out: the store does not import the report. */
interface ChartScripts {
  chartJs: string
  errorBars: string
  notice: string
}

let cached: ChartScripts | null = null

/** The inlined library text (read once). */
export function chartScripts(): ChartScripts {
  if (cached !== null) return cached
  const require = createRequire(import.meta.url)
  // Neither package exports its UMD file; it sits beside the CommonJS entry.
  const chartDir = dirname(require.resolve('chart.js'))
  const barsDir = dirname(require.resolve('chartjs-chart-error-bars'))
  const version = (pkg: string): string =>
    (JSON.parse(readFileSync(join(dirname(require.resolve(pkg)), '..', 'package.json'), 'utf8')) as { version: string }).version
  cached = {
    chartJs: readFileSync(join(chartDir, 'chart.umd.min.js'), 'utf8'),
    errorBars: readFileSync(join(barsDir, 'index.umd.min.js'), 'utf8'),
    notice: `chart.js ${version('chart.js')} (MIT) · chartjs-chart-error-bars ${version('chartjs-chart-error-bars')} (MIT)`,
  }
  return cached
}
