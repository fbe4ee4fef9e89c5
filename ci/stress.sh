#!/usr/bin/env bash
# make stress [N=3] [CLONES=1|2] [REPRO=id[,id]]: the gate N times in a row, optionally in two clones at once,
# and the count of false verdicts (cells whose outcome differs from expected/). Not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}; clones=${2:-1}; repro=${3:-}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "stress: N must be a positive integer, not '$n'" >&2; exit 2; }
[[ "$clones" == 1 || "$clones" == 2 ]] || { echo "stress: CLONES must be 1 or 2, not '$clones'" >&2; exit 2; }
select=(); [[ -n "$repro" ]] && select=(--repro "$repro")
roots=("$PWD")
work=$(mktemp -d /tmp/corpus-stress.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ "$clones" == 2 ]]; then
  # The second clone is of the committed tree: what CI would run.
  git clone -q . "$work/clone"
  (cd "$work/clone" && ci/setup.sh >/dev/null)
  roots+=("$work/clone")
fi
total=0; wrong=0
printf '%-4s %-6s %-7s %-7s %-6s %s\n' run clone cells wrong secs "false verdicts"
for ((i = 1; i <= n; i++)); do
  pids=()
  for c in "${!roots[@]}"; do
    id="stress-$(date -u +%Y%m%d-%H%M%S)-$i-$c-$$"
    ( cd "${roots[$c]}" && start=$(date +%s)
      dotnet build/harness/corpus/corpus.dll run --run-id "$id" "${select[@]}" >"$work/out-$i-$c.txt" 2>&1 || true
      echo "$id $(( $(date +%s) - start ))" >"$work/id-$i-$c" ) &
    pids+=($!)
  done
  wait "${pids[@]}"
  for c in "${!roots[@]}"; do
    read -r id secs <"$work/id-$i-$c"
    summary="${roots[$c]}/artifacts/$id/summary.json"
    if [[ ! -f "$summary" ]]; then
      echo "stress: run $i clone $c wrote no summary; its output:" >&2; tail -20 "$work/out-$i-$c.txt" >&2; exit 1
    fi
    read -r cells bad list < <(python3 - "$summary" <<'PY'
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
bad = [c for c in cells if c["gate"] in ("regression", "xpass", "mismatch")]
print(len(cells), len(bad), "; ".join(f'{c["repro"]}:{c["case"]}/{c["variant"]}/{c["subject"]} {c["outcome"]} ({c["detail"][:90]})' for c in bad) or "-")
PY
)
    printf '%-4s %-6s %-7s %-7s %-6s %s\n' "$i" "$c" "$cells" "$bad" "$secs" "$list"
    total=$((total + cells)); wrong=$((wrong + bad))
  done
done
echo "stress: $wrong false verdicts in $total cells ($n runs x $clones clone(s)${repro:+, $repro})"
[[ $wrong == 0 ]]
