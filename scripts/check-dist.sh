#!/usr/bin/env bash
# Rebuild dist/ and fail when it differs from what is committed: the Action runs
# dist/index.js, so a stale dist/ would ship code that is not in src/.
set -euo pipefail
cd "$(dirname "$0")/.."

node scripts/bundle.mjs

changed=0
if ! git diff --quiet -- dist; then
  changed=1
  echo "Changed files in dist/:" >&2
  git diff --stat -- dist >&2
fi
untracked="$(git ls-files --others --exclude-standard -- dist)"
if [ -n "$untracked" ]; then
  changed=1
  echo "New files in dist/ that are not committed:" >&2
  echo "$untracked" >&2
fi

if [ "$changed" -ne 0 ]; then
  msg="dist/ is out of date with src/: run 'npm run bundle' and commit dist/."
  if [ -n "${GITHUB_ACTIONS:-}" ]; then echo "::error::$msg"; else echo "$msg" >&2; fi
  exit 1
fi
echo "dist/ is up to date with src/."
