/**
 * `servegate report RESULT [--baseline FILE] --html FILE`: one self-contained
 * page — the frontier (output throughput per GPU vs interactivity, Pareto
 * front, target line, baseline vs candidate), latency percentiles vs
 * concurrency with the spread across repeats, the methodology's table,
 * validity issues, the environment and, with a baseline, the verdict. Chart.js
 * and the data are inlined; a Content-Security-Policy forbids every fetch, so
 * the page needs (and makes) no request when viewed. Every string from the
 * result is escaped: it reads as text, never as markup. Pure.
 */
import type { Baseline, Verdict } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import { plainValidity } from './format.js'
import { buildFrontier, type Frontier } from './frontier.js'
import { buildChartSpecs, SPREAD_NOTE, shapeTitle, type ChartSpec } from './html-data.js'
import { PAGE_CSS, PAGE_SCRIPT } from './html-script.js'
import { buildReportModel, CLOCK_LINE, COLUMNS, environmentLine, type ShapeReport } from './model.js'
import { SPREAD_COLUMNS } from './spread-rows.js'
import { fmtBar, fmtSignedPct, fmtValue, sortRows, verdictSummary, verdictWord } from './verdict-format.js'

/** The chart libraries the page inlines (an edge reads them: store/html-assets.ts). */
export interface ChartScripts {
  /** Chart.js UMD (defines window.Chart). */
  chartJs: string
  /** chartjs-chart-error-bars UMD (registers its controllers on window.Chart). */
  errorBars: string
  /** `chart.js 4.6.1 (MIT) · chartjs-chart-error-bars 4.4.5 (MIT)`: named in the page. */
  notice: string
}

export interface HtmlReportOptions {
  /** The baseline drawn beside the candidate (its newest refresh). */
  baseline?: Baseline | null
  /** The gate's verdict of the result against `baseline`. */
  verdict?: Verdict | null
  /** The chart library's text (./html-assets.ts). */
  scripts: ChartScripts
}

/** Text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** JSON safe inside a <script> element: no `<`, `>`, `&` or line separators survive literally. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

// A library's text inside <script>: it must not close the element, nor point the viewer at a source map to fetch.
function inlineScript(js: string): string {
  return js
    .replace(/^\/\/# sourceMappingURL=.*$/gm, '')
    .replace(/<\/(script)/gi, '<\\/$1')
    .replace(/<!--/g, '<\\!--')
}

const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

/** The whole page. */
export function renderHtmlReport(result: ResultFile, opts: HtmlReportOptions): string {
  const frontier = buildFrontier(result, opts.baseline ?? null)
  const specs = buildChartSpecs(result, frontier)
  const model = buildReportModel(result)
  const e = escapeHtml
  const body: string[] = []
  body.push(`<h1>servegate report${model.sweep !== null ? ` — sweep <code>${e(model.sweep)}</code>` : ''}</h1>`)
  body.push(`<p class="sub">${e(environmentLine(result.env))}</p>`)
  body.push(`<p class="sub">Target: ${e(frontier.targetLabel)}. Measured ${e(result.env.started_at)} → ${e(result.env.finished_at)}.</p>`)
  if (model.interrupted !== null) body.push(`<p class="warn">${e(model.interrupted)}</p>`)
  body.push(`<p class="sub">${e(model.headroom)}</p>`)
  if (opts.verdict) body.push(verdictHtml(opts.verdict))
  for (const shape of model.shapes) body.push(shapeHtml(shape, specs, frontier))
  body.push(validityHtml(result), methodologyHtml(result, model.target), environmentHtml(result))
  body.push(`<footer>Written by servegate ${e(result.harness.version)}. Charts drawn with ${e(opts.scripts.notice)}, inlined in this page.</footer>`)
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>servegate report${model.sweep !== null ? ` — ${e(model.sweep)}` : ''}</title>`,
    `<style>${PAGE_CSS}</style>`,
    '</head><body>',
    ...body,
    `<script type="application/json" id="servegate-data">${scriptJson({ schema: 'servegate.html-report/v1', charts: specs })}</script>`,
    `<script>${inlineScript(opts.scripts.chartJs)}</script>`,
    `<script>${inlineScript(opts.scripts.errorBars)}</script>`,
    `<script>${PAGE_SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}

function table(head: readonly string[], rows: readonly (readonly string[])[], numeric: (col: number) => boolean = () => false): string {
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')
  const trs = rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric(i) ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`)
  return `<table><thead><tr>${th}</tr></thead><tbody>${trs.join('')}</tbody></table>`
}

function verdictHtml(v: Verdict): string {
  const e = escapeHtml
  const out = [`<section class="verdict v-${e(v.verdict)}"><h2>Verdict: ${e(verdictWord(v.verdict))}</h2>`, `<p>${e(verdictSummary(v))}</p>`]
  if (v.reasons.length > 0) out.push(`<ul>${v.reasons.map((r) => `<li>${e(r)}</li>`).join('')}</ul>`)
  const rows = (gated: boolean): string[][] =>
    sortRows(v.rows.filter((r) => r.gated === gated)).map((r) => [
      r.status,
      r.label,
      fmtValue(r.baseline, r.unit),
      fmtValue(r.candidate, r.unit),
      fmtSignedPct(r.delta_pct),
      fmtBar(r),
      `${r.n_baseline}/${r.n_candidate}`,
    ])
  const head = ['Status', 'Metric', 'Baseline', 'Candidate', 'Change', 'Bar', 'n (base/cand)']
  // The gated rows decide; the reported ones are the full account, collapsed so the charts stay near the top.
  out.push(`<details><summary>Gated metrics (${v.rows.filter((r) => r.gated).length})</summary>${table(head, rows(true), (i) => i >= 2)}</details>`)
  const reported = rows(false)
  if (reported.length > 0) out.push(`<details><summary>Reported, not gated (${reported.length})</summary>${table(head, reported, (i) => i >= 2)}</details>`)
  if (v.envChanges.length > 0)
    out.push(
      '<h3>Environment changes</h3>',
      table(
        ['Changed by', 'Field', 'Baseline', 'Candidate'],
        v.envChanges.map((c) => [c.blame, c.field, c.baseline, c.candidate]),
      ),
    )
  else out.push('<p class="caption">Environment: no changes recorded between baseline and candidate.</p>')
  out.push('</section>')
  return out.join('\n')
}

function shapeHtml(shape: ShapeReport, specs: ChartSpec[], frontier: Frontier): string {
  const e = escapeHtml
  const title = shapeTitle(shape.inputLen, shape.outputLen)
  const mine = specs.filter((s) => s.shape === title)
  const sf = frontier.shapes.find((s) => s.inputLen === shape.inputLen && s.outputLen === shape.outputLen)
  const out = [`<section data-shape="${e(title)}"><h2>${e(shape.title)}</h2>`]
  for (const spec of mine.filter((s) => s.kind === 'frontier')) {
    out.push(`<div class="frontier"><canvas id="${e(spec.id)}" data-kind="frontier" role="img" aria-label="${e(spec.title)}"></canvas></div>`)
  }
  if (sf !== undefined) {
    const gpus = frontier.perGpu
      ? `per GPU (${[`candidate ${frontier.gpus.candidate}`, ...(sf.series.length > 1 ? [`baseline ${frontier.gpus.baseline}`] : [])].join(', ')} GPUs)`
      : 'for the whole server: the GPU count is unknown, so no per-GPU figure is given'
    out.push(
      `<p class="caption">y: output tokens per second (completed output tokens / measured duration; prompt tokens not counted), ${e(gpus)}. x: interactivity, 1000 / p95 TPOT ms, the decode speed a user sees at p95. Each mark is one measured concurrency (medians across valid repeats); filled diamonds and the dashed line are the Pareto front (no other point is both more interactive and faster); the red line is the target, ${e(frontier.targetLabel)}.${sf.noValidRun.length > 0 ? ` Left off: C=${e(sf.noValidRun.join(', '))} (no valid run).` : ''}</p>`,
    )
    const rows = sf.series.flatMap((s) =>
      s.points.map((p) => [
        s.label,
        String(p.concurrency),
        p.interactivity.toFixed(1),
        p.throughput.toFixed(1),
        p.onFront ? 'yes' : '',
        p.meetsTarget === null ? 'unknown' : p.meetsTarget ? 'yes' : 'no',
      ]),
    )
    out.push(
      `<details><summary>Frontier points</summary>${table(['Series', 'Concurrency', 'tok/s/user (p95 TPOT)', frontier.yLabel, 'Pareto front', 'Holds the target'], rows, (i) => i >= 1 && i <= 3)}</details>`,
    )
  }
  const latency = mine.filter((s) => s.kind === 'latency')
  if (latency.length > 0) {
    out.push(`<h3>Latency percentiles vs concurrency</h3><p class="caption">${e(SPREAD_NOTE)} Client-side clock.</p><div class="grid">`)
    for (const spec of latency)
      out.push(`<div class="latency"><canvas id="${e(spec.id)}" data-kind="latency" role="img" aria-label="${e(spec.title)}"></canvas></div>`)
    out.push('</div>')
  }
  out.push(`<h3>The methodology's table</h3><p class="caption">${e(CLOCK_LINE)}</p>`)
  out.push(
    table(
      COLUMNS,
      shape.rows.map((r) => r.cells),
      (i) => i > 0,
    ),
  )
  if (shape.warmup !== null) out.push(`<p>${e(shape.warmup)}</p>`)
  out.push(`<p><strong>${e(shape.atTarget)}</strong></p>`)
  if (shape.notes.length > 0) out.push(`<ol>${shape.notes.map((n) => `<li>${e(n)}</li>`).join('')}</ol>`)
  if (shape.spread.length > 0)
    out.push(
      `<details><summary>Spread across repeats</summary><p class="caption">Valid runs only; CV = sample standard deviation / mean.</p>${table(SPREAD_COLUMNS, shape.spread, (i) => i >= 2)}</details>`,
    )
  out.push('</section>')
  return out.join('\n')
}

function validityHtml(result: ResultFile): string {
  const rows: string[][] = []
  let runs = 0
  for (const p of result.points) {
    for (const r of p.runs) {
      runs++
      for (const i of r.validity.issues)
        rows.push([
          shapeTitle(p.input_len, p.output_len),
          String(p.concurrency),
          String(r.repeat),
          r.validity.valid ? 'kept' : 'left out',
          i.code,
          plainValidity(i.code),
          i.detail,
        ])
    }
  }
  const head = '<section><h2>Validity</h2>'
  if (rows.length === 0) return `${head}<p>All ${runs} measured run${runs === 1 ? '' : 's'} passed every validity check.</p></section>`
  return `${head}<p>${rows.length} issue${rows.length === 1 ? '' : 's'} in ${runs} runs; an invalid run is left out of every median and chart.</p>${table(['Shape', 'Concurrency', 'Repeat', 'Run', 'Code', 'Meaning', 'Detail'], rows)}</section>`
}

function methodologyHtml(result: ResultFile, target: string): string {
  const cfg = result.config ?? {}
  const text = (v: unknown): string => (v === undefined || v === null ? 'unknown' : typeof v === 'string' ? v : JSON.stringify(v))
  const shapes = Array.isArray(cfg.shapes)
    ? (cfg.shapes as { input_len: number; output_len: number }[]).map((s) => shapeTitle(s.input_len, s.output_len)).join('; ')
    : [...new Set(result.points.map((p) => shapeTitle(p.input_len, p.output_len)))].join('; ')
  const server = (cfg.server ?? {}) as { api?: unknown }
  const rows: [string, string][] = [
    ['Shapes (fixed, ignore_eos)', shapes],
    ['Concurrency (closed loop)', text(cfg.concurrency)],
    ['Measured requests per point', `concurrency × ${text(cfg.prompts_per_concurrency)}`],
    ['Warmup per run (discarded)', text(cfg.warmup)],
    ['Repeats per point', text(cfg.repeats)],
    ['Target', target],
    ['API', text(server.api)],
    ['Seed', `${text(cfg.seed)}${cfg.seed_pinned === false ? ' (fresh per invocation)' : ''}`],
    ['Clock', CLOCK_LINE],
  ]
  const defs = Object.entries(result.env.definitions ?? {})
  return `<section><h2>What was measured and how</h2>${table(['', ''], rows)}${defs.length > 0 ? `<h3>Definitions</h3>${table(['Figure', 'Definition'], defs)}` : ''}</section>`
}

function environmentHtml(result: ResultFile): string {
  const env = result.env
  const rows: [string, string][] = [
    ['Engine', `${env.engine.name} ${env.engine.version}`],
    ['Model', `${env.model.id} (revision ${env.model.revision}, root ${env.model.root})`],
    [
      'GPU',
      env.gpu.names.length > 0
        ? `${env.gpu.count} × ${[...new Set(env.gpu.names)].join(', ')}`
        : `${env.gpu.count === 'unknown' ? 'unknown' : `${env.gpu.count} (names unknown)`}`,
    ],
    ['Driver / CUDA', `${env.gpu.driver_version} / ${env.gpu.cuda_version}`],
    ['Clocks', env.gpu.clocks],
    ['Container digest', env.container_digest],
    ['Serve command', env.serve_command],
    ['Server', env.base_url],
    ['servegate', `${env.harness.version} (commit ${env.harness.git_commit}), Node ${env.harness.node_version}`],
    ['Host', `${env.host.hostname}, ${env.host.platform}, ${env.host.cpus} CPUs`],
    ['Measured', `${env.started_at} → ${env.finished_at}`],
  ]
  return `<section><h2>Environment</h2>${table(['', ''], rows)}</section>`
}
