#!/usr/bin/env bash
# The failed tests of a `dotnet test` console log, each with its message and the head of its stack, so that the end of a
# CI log (often all a reader gets) names them. Usage: ci/failed-tests.sh LOG
set -euo pipefail
log=${1:?usage: ci/failed-tests.sh LOG}
echo "== the failed tests (from $log):"
# A block runs from "  Failed <test> [time]" to the next test or summary line; 40 lines of it name the cause.
awk '/^  (Passed|Skipped) |^(Passed|Failed)! |^Test run for |^A total of / { on = 0 }
     /^  Failed [^ ]+ \[/ { on = 1; n = 0 }
     on && n++ < 40 { print }
     /^Failed! +- Failed:/ { print }' "$log"
