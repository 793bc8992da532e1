#!/usr/bin/env bash
# `servegate history` on a baseline built the way a nightly refresh builds it:
# eight sweeps against the built-in simulator, each started by servegate
# (--serve, so the serve command is recorded), each appended with
# `servegate baseline update`; from the sixth on, the engine is 10 % slower
# (--slowdown 1.10) and started by another command. About a minute; no GPU.
#
#   bash scripts/history-demo.sh [DIR]        # DIR default: a fresh temp dir
#   SERVEGATE="node --import tsx src/cli.ts" bash scripts/history-demo.sh   # servegate from sources
set -euo pipefail
cd "$(dirname "$0")/.."

sg=${SERVEGATE:-node bin/servegate.js}
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
# The engine under test: the committed CLI's simulator, as a serving job would start it.
sim="node bin/servegate.js sim --port {port} --ttft-ms 20 --itl-ms 80 --seed 5"
# 16 requests of 7 token gaps per run (the fewest that pass too_few_requests), three repeats;
# TPOT is 80–88 ms, so the target is 200 ms.
sweep=(--input-len 32 --output-len 8 --concurrency 16 --prompts-per-concurrency 1 --repeats 3 --target tpot:p95:200)

for i in 1 2 3 4 5 6 7 8; do
  serve=$sim
  if [ "$i" -ge 6 ]; then serve="$sim --slowdown 1.10"; fi
  $sg run --serve "$serve" "${sweep[@]}" --out "$dir/refresh-$i.json" >/dev/null 2>"$dir/refresh-$i.log"
  $sg baseline update "$dir/refresh-$i.json" --into "$dir/gate.json" >/dev/null
done
$sg history "$dir/gate.json" --markdown "$dir/history.md" --json "$dir/history.json"
echo "(baseline, results, markdown and JSON in $dir)"
