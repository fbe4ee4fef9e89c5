#!/usr/bin/env bash
# The repros' Pester tests: ci/pester.sh RUN [REPRO...]. RUN is a finished run (an id, artifacts/<id> or latest)
# whose cells they assert over without running any; empty, they run their cells. Exit 0 only when all pass.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1-}; shift || true
args=(-File ci/pester.ps1 -Run "$run")
(($#)) && args+=(-Repro "$(IFS=,; echo "$*")")
exec ci/pwsh.sh "${args[@]}"
