#!/usr/bin/env bash
# The planted regression (issue 26, 4e): .NET 10 as the base and Mono as the "patched" build of
# binaryformatter-quadratic's deserialize sweep. `corpus compare` must say `regressed`, give both exponents with
# their intervals, and exit 1. Only the deserialize case: the idgen-limit case proves nothing more about compare.
# Over the gate's run (`--from`, the run artifacts/latest names): its two cells are round 1, so nothing runs again.
set -uo pipefail
cd "$(dirname "$0")/.."
export TMPDIR=${TMPDIR:-$PWD/build/tmp}
id="compare-planted-$(date -u +%Y%m%d-%H%M%S)-$$"
# make test runs this after the gate: artifacts/latest must still name the gate's run (its junit.xml is CI's) after it.
latest=$(readlink artifacts/latest 2>/dev/null || true)
restore() { [[ -n $latest ]] && ln -sfn "$latest" artifacts/latest; }
trap restore EXIT
mkdir -p build
[[ -n $latest ]] || { echo "compare-planted: artifacts/latest names no run: run the gate first (make gate)" >&2; exit 1; }
dotnet build/harness/corpus/corpus.dll compare --base net10 --new mono --repro binaryformatter-quadratic --case deserialize --run-id "$id" \
  --from "$latest" 2>&1 \
  | tee build/compare-planted.out
code=${PIPESTATUS[0]}
json="artifacts/$id/compare.json"
fail() { echo "compare-planted: $*" >&2; exit 1; }
[[ $code == 1 ]] || fail "corpus compare exited $code, not 1 (a regression)"
[[ -f $json ]] || fail "no $json"
jq -e '.cells | length == 1' "$json" >/dev/null || fail "$json: expected exactly the deserialize cell"
cell='.cells[0]'
[[ $(jq -r "$cell.verdict" "$json") == regressed ]] || fail "$json: verdict $(jq -r "$cell.verdict" "$json"), not regressed"
# Both exponents with their intervals: net10 linear (under cleanMax 1.3), Mono's above net10's whole interval.
# Measured at load average 13-30, Mono's fell to 1.64 (a wrong-failure of the sweep, still `regressed`: clean on base,
# failing on new), and the bounds widen with the load (4 sizes: the lowest to the highest pair slope; one disturbed
# run moves one), so neither is held to the sweep's thresholds, and whether the intervals overlap is printed.
jq -e "$cell.figures[0] | .name == \"exponent\" and .base.confidence > 0.9 and .new.confidence > 0.9
       and .base.low <= .base.value and .base.value <= .base.high and .base.value < 1.3
       and .new.low <= .new.value and .new.value <= .new.high and .new.value > .base.high" "$json" >/dev/null \
  || fail "$json: the exponents are not as planted: $(jq -c "$cell.figures" "$json")"
grep -q "^binaryformatter-quadratic:deserialize .* REGRESSED .*exponent" build/compare-planted.out || fail "the table shows no regressed deserialize row"
[[ -f artifacts/$id/compare.md && -f artifacts/$id/junit.xml ]] || fail "compare.md or junit.xml missing"
grep -q '<failure message="regressed' "artifacts/$id/junit.xml" || fail "junit.xml has no failing regressed testcase"
# Both sides are the gate's own cells, read from its records: compare ran neither again.
for side in base new; do
  facts=$(jq -r "$cell.$side.rounds[0].facts" "$json")
  [[ $facts == artifacts/$latest/* ]] || fail "$json: the $side side's facts are $facts, not the gate's run ($latest)"
done
grep -q "round 1 (run $latest)" build/compare-planted.out || fail "compare did not say that round 1 came from run $latest"
echo "compare-planted: regressed, exponents $(jq -r "$cell.figures[0] | \"\(.base.value) [\(.base.low), \(.base.high)] → \(.new.value) [\(.new.low), \(.new.high)], differs: \(.differs)\"" "$json"), exit 1, as planted"
