#!/usr/bin/env bash
# Why a `dotnet test` run failed, from its console log: each failed test with its message and the head of its stack, a
# test host that crashed or a run that aborted, and the build's errors; so that the end of a CI log (often all a reader
# gets) names the cause. Usage: ci/failed-tests.sh LOG
set -euo pipefail
log=${1:?usage: ci/failed-tests.sh LOG}
echo "== why dotnet test failed (from $log):"
# A failed test's block runs from "  Failed <test> [time]" to the next test or summary line; 40 lines of it name the cause.
awk '/^  (Passed|Skipped) |^(Passed|Failed)! |^Test run for |^A total of / { on = 0 }
     /^  Failed [^ ]+ \[/ { on = 1; n = 0 }
     on && n++ < 40 { print; next }
     /^Failed! +- Failed:|[Tt]est run (was )?aborted|[Tt]est host process crashed|: error [A-Z]+[0-9]+:/ && !seen[$0]++ { print }' "$log"
