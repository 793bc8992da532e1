#!/usr/bin/env bash
# The picture of the HTML report in docs/run.md: two sweeps of the built-in batching
# simulator (its default profile: latency grows with the batch as on a GPU),
# the second 15 % slower, then `servegate report --html` of the second with the
# first as its baseline, photographed in headless Chromium. A few minutes; no GPU.
#
#   bash scripts/report-screenshot.sh [OUT.png] [DIR]
#     OUT.png default docs/img/report.png; DIR default: a fresh temp dir
#     CHROMIUM_PATH picks the browser (default: chromium on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-docs/img/report.png}
dir=${2:-$(mktemp -d)}
sg=${SERVEGATE:-node bin/servegate.js}
mkdir -p "$dir"
# Model time at 0.5 × wall clock keeps the client's own lateness well under the simulated gaps.
# A target of p95 TPOT ≤ 8 ms (125 tok/s/user, wall clock) falls inside the curve, so the picture shows where it is crossed.
sweep=(--input-len 512 --output-len 64 --concurrency 1,2,4,8,16,32 --repeats 3 --target tpot:p95:8)
$sg run --serve "node bin/servegate.js sim --port {port} --profile default --time-scale 0.5 --seed 3" "${sweep[@]}" --out "$dir/baseline.json" >/dev/null 2>"$dir/baseline.log"
$sg run --serve "node bin/servegate.js sim --port {port} --profile default --time-scale 0.5 --seed 3 --slowdown 1.15" "${sweep[@]}" --out "$dir/candidate.json" >/dev/null 2>"$dir/candidate.log"
$sg report "$dir/candidate.json" --baseline "$dir/baseline.json" --html "$dir/report.html" >/dev/null
node --input-type=module - "$dir/report.html" "$out" <<'JS'
import { chromium } from 'playwright-core'
import { execFileSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
const [page_, out] = process.argv.slice(2)
const exe = process.env.CHROMIUM_PATH || execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim()
const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox'] })
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 860 } })
  await page.goto(pathToFileURL(page_).href)
  await page.waitForFunction(() => window.__servegate?.ready === true, null, { timeout: 20000 })
  const top = await page.locator('section[data-shape] h2').first().boundingBox()
  const last = await page.locator('section[data-shape] .latency').last().boundingBox()
  await page.screenshot({ path: out, fullPage: true, clip: { x: 0, y: top.y - 8, width: 1100, height: last.y + last.height - top.y + 16 } })
} finally {
  await browser.close()
}
JS
echo "wrote $out (results and the page in $dir)"
