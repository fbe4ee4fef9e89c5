#!/usr/bin/env bash
# The bug's rate per tracing mode: N runs of the raced bug variant, two at a time, and a 95% Wilson interval.
# usage: rates.sh BUILD_DIR MODE [N] [ITERATIONS]   MODE: none | ring | printf | lttng (needs a running lttng-sessiond)
# A hit is a death of the early-deleted object: a pure virtual call, a glibc heap check, or the same object deleted
# twice (SIGSEGV through the freed vtable pointer). Other endings are counted apart. Prints one summary line, then the
# figures as `figure rate_pct_MODE=…` and `figure s_per_run_MODE=…` lines (the labs' test reads those). The runs'
# files live in a folder it removes; the shell's "Aborted" notice per crashed run is kept out of the output.
set -euo pipefail
build=$1; mode=$2; n=${3:-300}; iterations=${4:-1000000}
prog=$build/refcount_lost_update
[[ $mode == lttng ]] && prog=$build/refcount_lost_update_lttng
[[ -x $prog ]] || { echo "rates.sh: $prog is missing (build the cpp folder first)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/refcount-rates.XXXXXX"); trap 'rm -rf "$work"' EXIT
session=
if [[ $mode == lttng ]]; then
  session=refcount-rates-$$
  lttng create "$session" --output="$work/trace" >/dev/null
  lttng enable-event -u 'refcount:*' >/dev/null
  lttng start >/dev/null
fi
one() {  # run index
  local out=$work/$1
  ( ulimit -c 0; exec "$prog" bug --iterations "$iterations" --trace "$mode" ) >"$out.out" 2>"$out.err" && echo 0 >"$out.rc" || echo $? >"$out.rc"
}
start=$(date +%s.%N)
for ((i = 0; i < n; i += 2)); do
  { one "$i" 2>/dev/null & } 2>/dev/null; { ((i + 1 < n)) && one $((i + 1)) 2>/dev/null; }; wait 2>/dev/null
done
seconds=$(echo "$(date +%s.%N) - $start" | bc)
trace_bytes=0
if [[ -n $session ]]; then
  lttng stop "$session" >/dev/null; lttng destroy "$session" >/dev/null
  trace_bytes=$(du -sb "$work/trace" | cut -f1)
fi
hits=0; other=0; clean=0; lost=0
for ((i = 0; i < n; i++)); do
  rc=$(cat "$work/$i.rc")
  deleted_twice=$(grep -o 'DeleteObject called 0x[0-9a-f]*' "$work/$i.err" | sort | uniq -d | wc -l || true)
  if [[ $rc != 0 ]] && { grep -qE 'pure virtual method called|double free|[a-z_]+\(\): |corrupted' "$work/$i.err" || ((deleted_twice)); }; then hits=$((hits + 1))
  elif [[ $rc == 0 ]]; then clean=$((clean + 1))
    grep -q '"lost_increments": 0, "lost_decrements": 0' "$work/$i.out" || lost=$((lost + 1))
  else other=$((other + 1)); fi
done
python3 - "$mode" "$n" "$hits" "$other" "$clean" "$lost" "$seconds" "$trace_bytes" <<'PY'
import math, sys
mode, n, hits, other, clean, lost, seconds, tb = sys.argv[1], *map(int, sys.argv[2:7]), float(sys.argv[7]), int(sys.argv[8])
z = 1.959964
p = hits / n
d = 1 + z * z / n
c = (p + z * z / (2 * n)) / d
h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
print(f"{mode}: {hits}/{n} = {100*p:.1f}% (95% Wilson {100*max(0,c-h):.1f}-{100*min(1,c+h):.1f}%); "
      f"other failures {other}; clean {clean} (of which {lost} lost updates without a crash); "
      f"{seconds:.0f} s, {seconds/n*2:.2f} s per run" + (f"; trace {tb/1048576:.0f} MB ({tb/n/1048576:.1f} MB per run)" if tb else ""))
print(f"figure rate_pct_{mode}={100*p:.1f}")
print(f"figure s_per_run_{mode}={seconds/n*2:.3f}")
PY
