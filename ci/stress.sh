#!/usr/bin/env bash
# make stress [N=3] [CLONES=1|2] [REPRO=id[,id]] [LOAD=1]: the gate N times in a row, optionally in two clones at once,
# and the count of false verdicts (cells whose verdict differs from expected/), apart from inconclusive cells, errors
# and retried runs. LOAD=1 is chaos in the manner of rr's chaos mode: a busy loop on every core and a hog that keeps
# a quarter of the memory touched, for the whole stress run. Not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}; clones=${2:-1}; repro=${3:-}; load=${4:-}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "stress: N must be a positive integer, not '$n'" >&2; exit 2; }
[[ "$clones" == 1 || "$clones" == 2 ]] || { echo "stress: CLONES must be 1 or 2, not '$clones'" >&2; exit 2; }
[[ -z "$load" || "$load" == 0 || "$load" == 1 ]] || { echo "stress: LOAD must be 0 or 1, not '$load'" >&2; exit 2; }
select=(); [[ -n "$repro" ]] && select=(--repro "$repro")
roots=("$PWD")
work=$(mktemp -d /tmp/corpus-stress.XXXXXX)
hogs=()
cleanup() { ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
if [[ "$load" == 1 ]]; then
  # One busy loop per core, and a quarter of MemTotal allocated and touched again every 2 s (page cache and the
  # cells' own memory then compete for what is left).
  for ((c = 0; c < $(nproc); c++)); do ( exec -a corpus-stress-busy bash -c 'while :; do :; done' ) & hogs+=($!); done
  python3 - "$(awk '/MemTotal/ {print int($2 / 4 / 1024)}' /proc/meminfo)" <<'PY' & hogs+=($!)
import sys, time
mb = int(sys.argv[1])
block = [bytearray(1 << 20) for _ in range(mb)]
while True:
    for b in block: b[::4096] = b"\x01" * len(b[::4096])
    time.sleep(2)
PY
  echo "stress: LOAD=1: $(nproc) busy loops and a $(awk '/MemTotal/ {print int($2 / 4 / 1024)}' /proc/meminfo) MB hog, pids ${hogs[*]}"
fi
if [[ "$clones" == 2 ]]; then
  # The second clone is of the committed tree: what CI would run.
  git clone -q . "$work/clone"
  (cd "$work/clone" && ci/setup.sh >/dev/null)
  roots+=("$work/clone")
fi
total=0; wrong=0; undecided=0; errors=0; retried=0
printf '%-4s %-6s %-6s %-6s %-6s %-6s %-7s %-6s %s\n' run clone cells false incon error retried secs "load; false verdicts, inconclusive cells, errors, retried runs"
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
    read -r cells bad incon err retries list < <(python3 - "$summary" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, os, sys
run = json.load(open(sys.argv[1]))
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[1]))))
cells = run["cells"]
def name(c): return f'{c["repro"]}:{c["case"]}/{c["variant"]}/{c["subject"]}'
# A false verdict: a verdict about the bug (reproduced, clean, wrong-failure) that differs from expected/.
false = [c for c in cells if c["gate"] in ("regression", "xpass", "mismatch") and c["outcome"] in ("reproduced", "clean", "wrong-failure")]
undecided = [c for c in cells if c["outcome"] == "inconclusive"]
errors = [c for c in cells if c["gate"] != "pass" and c["outcome"] == "error"]
retried = []
for c in cells:
    facts = os.path.join(root, c["facts"]) if c.get("facts") else None
    if facts and os.path.exists(facts):
        f = json.load(open(facts))
        retried += [f'{name(c)} {r[:80]}' for r in f.get("launchRetries") or []]
        retried += [f'{name(c)} {r["label"]} (snapshots retaken)' for r in f.get("runs") or [] if r["label"].startswith("recapture")]
        retried += [f'{name(c)} {t["run"]} (trace retaken)' for t in f.get("traces") or [] if t.get("error")]
parts = [f'load {sys.argv[2]}'] + [f'FALSE {name(c)} {c["outcome"]} ({c["detail"][:120]})' for c in false] \
    + [f'INCONCLUSIVE {name(c)} ({c["detail"][:160]})' for c in undecided] + [f'ERROR {name(c)} ({c["detail"][:120]})' for c in errors] \
    + [f'RETRIED {r}' for r in retried]
print(len(cells), len(false), len(undecided), len(errors), len(retried), "; ".join(parts))
PY
)
    printf '%-4s %-6s %-6s %-6s %-6s %-6s %-7s %-6s %s\n' "$i" "$c" "$cells" "$bad" "$incon" "$err" "$retries" "$secs" "$list"
    total=$((total + cells)); wrong=$((wrong + bad)); undecided=$((undecided + incon)); errors=$((errors + err)); retried=$((retried + retries))
  done
done
echo "stress: $wrong false verdicts in $total cells, $undecided inconclusive, $errors errors, $retried retried runs ($n runs x $clones clone(s)${repro:+, $repro}${load:+, LOAD=$load})"
[[ $wrong == 0 ]]
