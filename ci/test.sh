#!/usr/bin/env bash
# make test: setup, the unit tests, the gate, the repros' Pester tests over the gate's run, the planted Pester and the
# planted compare, each timed; the stage times are printed at the end, passed or not. Exit: the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
times=(); code=0
stage() {
  local name=$1; shift
  local start=$SECONDS
  echo "== make test: $name …" >&2
  "$@"; local rc=$?
  times+=("$name $((SECONDS - start)) s$([[ $rc == 0 ]] || echo " (exit $rc)")")
  ((rc == 0)) || { code=$rc; return 1; }
}
report() {
  local joined; joined=$(printf '%s; ' "${times[@]}")
  echo "make test: ${joined}$((SECONDS - start_all)) s in all" >&2
}
start_all=$SECONDS
trap report EXIT
stage setup ci/setup.sh &&
  stage unit ci/unit.sh &&
  stage gate ci/gate.sh &&
  stage pester ci/pester.sh latest &&
  stage pester-planted ci/pwsh.sh -File ci/pester-planted.ps1 -Run latest &&
  stage compare-planted ci/compare-planted.sh
exit $code
