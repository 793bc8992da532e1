/**
 * The HTML report's own style and script, as text inlined into the page. The
 * script reads the chart specs (./html-data.ts) from the page's JSON block,
 * draws each with Chart.js and exposes what it drew as `window.__servegate`
 * (a browser test counts the marks there). Plain ES2017, no imports.
 */

export const PAGE_CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1180px; padding: 16px 24px 48px; color: #1b1f23; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #57606a; margin: 2px 0; }
.verdict { border: 1px solid #d0d7de; border-left-width: 6px; border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
.v-pass, .v-improvement { border-left-color: #1a7f37; } .v-regression, .v-broken { border-left-color: #cf222e; }
.v-incomplete, .v-not_comparable { border-left-color: #9a6700; } .v-unmeasured, .v-undecided { border-left-color: #bf8700; }
.warn { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 6px 12px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.frontier { position: relative; height: 420px; margin: 8px 0; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 12px; }
.latency { position: relative; height: 250px; }
.caption { color: #57606a; font-size: 12.5px; margin: 2px 0 10px; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; padding: 0 3px; border-radius: 3px; }
footer { color: #57606a; font-size: 12px; margin-top: 32px; }
`

export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var state = { ready: false, charts: [], errors: [] };
  window.__servegate = state;
  var specs = JSON.parse(document.getElementById('servegate-data').textContent).charts;
  if (window.ChartErrorBars) Chart.register(window.ChartErrorBars.LineWithErrorBarsController, window.ChartErrorBars.PointWithErrorBar);
  function fmt(x) { return Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : (Math.round(x * 10) / 10).toString(); }
  function axis(title, extra) { var a = { title: { display: true, text: title }, beginAtZero: true }; for (var k in extra) a[k] = extra[k]; return a; }
  function frontier(spec) {
    var datasets = [];
    var ymax = 0, xmax = spec.target ? spec.target.x : 0;
    spec.series.forEach(function (s) {
      s.points.forEach(function (p) { ymax = Math.max(ymax, p.y); xmax = Math.max(xmax, p.x); });
      datasets.push({ type: 'scatter', label: s.label, sgRole: 'series', sgSeries: s.role, data: s.points.map(function (p) { return { x: p.x, y: p.y, c: p.c, front: p.front, meets: p.meets }; }),
        borderColor: s.color, backgroundColor: s.points.map(function (p) { return p.front ? s.color : '#ffffff'; }),
        pointStyle: s.points.map(function (p) { return p.front ? 'rectRot' : 'circle'; }), pointRadius: s.points.map(function (p) { return p.front ? 7 : 5; }), borderWidth: 2 });
      var front = s.points.filter(function (p) { return p.front; }).sort(function (a, b) { return a.x - b.x; });
      datasets.push({ type: 'line', label: s.label + ': Pareto front', sgRole: 'front', sgSeries: s.role, data: front.map(function (p) { return { x: p.x, y: p.y }; }),
        borderColor: s.color, borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, pointHitRadius: 0, fill: false, tension: 0 });
    });
    if (spec.target) {
      datasets.push({ type: 'line', label: spec.target.label, sgRole: 'target', data: [{ x: spec.target.x, y: 0 }, { x: spec.target.x, y: ymax * 1.08 || 1 }],
        borderColor: '#cf222e', borderWidth: 2, borderDash: [2, 3], pointRadius: 0, pointHitRadius: 0, fill: false });
    }
    return { type: 'scatter', data: { datasets: datasets }, options: { animation: false, maintainAspectRatio: false, responsive: true,
      plugins: { title: { display: true, text: spec.title }, legend: { position: 'bottom' },
        tooltip: { callbacks: { label: function (ctx) { var d = ctx.raw; if (ctx.dataset.sgRole !== 'series') return ctx.dataset.label;
          return ctx.dataset.label + ' C=' + d.c + ': ' + fmt(d.x) + ' tok/s/user, ' + fmt(d.y) + ' ' + spec.yLabel + (d.front ? ' (Pareto front)' : '') + (d.meets === false ? ' (misses the target)' : ''); } } } },
      scales: { x: axis(spec.xLabel, { type: 'linear', suggestedMax: xmax * 1.05 }), y: axis(spec.yLabel, { type: 'linear' }) } } };
  }
  function latency(spec) {
    return { type: 'lineWithErrorBars', data: { labels: spec.labels, datasets: spec.series.map(function (s) {
      return { label: s.label, sgRole: 'series', data: s.points, borderColor: s.color, backgroundColor: s.color, errorBarColor: s.color, errorBarWhiskerColor: s.color, pointRadius: 3, borderWidth: 1.5 }; }) },
      options: { animation: false, maintainAspectRatio: false, responsive: true, plugins: { title: { display: true, text: spec.title }, legend: { position: 'bottom' } },
        scales: { x: { title: { display: true, text: 'concurrency' } }, y: axis(spec.yLabel, {}) } } };
  }
  specs.forEach(function (spec) {
    try {
      var canvas = document.getElementById(spec.id);
      var chart = new Chart(canvas, spec.kind === 'frontier' ? frontier(spec) : latency(spec));
      state.charts.push({ id: spec.id, kind: spec.kind, shape: spec.shape, datasets: chart.data.datasets.map(function (d, i) {
        return { label: d.label, role: d.sgRole, series: d.sgSeries || null, marks: chart.getDatasetMeta(i).data.length }; }) });
    } catch (e) { state.errors.push(spec.id + ': ' + (e && e.message ? e.message : String(e))); throw e; }
  });
  state.ready = true;
})();
`
