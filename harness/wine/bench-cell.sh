#!/usr/bin/env bash
# Benchmark of the per-cell Wine isolation (harness/wine/cell.sh): each piece's time over several up/down
# rounds, and the disk a cell's prefix adds to the template's.
#   bench-cell.sh [rounds] [copy modes...]     e.g. bench-cell.sh 5 hardlink overlay
set -euo pipefail
trap 'echo "bench: line $LINENO failed" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-5}; shift || true
modes=("${@:-hardlink}")
template=${CORPUS_WINE_TEMPLATE:-$root/.cache/wine/template}
base=$(mktemp -d "$root/.cache/wine/bench.XXXXXX")
trap '"$here/cell.sh" down "$base/cell" >/dev/null 2>&1 || true; rm -rf "$base"' EXIT
for mode in "${modes[@]}"; do
  : > "$base/all"
  for ((i = 1; i <= rounds; i++)); do
    "$here/cell.sh" up "$base/cell" --copy "$mode" --display >/dev/null
    # Disk the cell adds: du counts a hard-linked file once, under the first path that reaches it.
    dirs=("$template" "$base/cell/prefix"); [[ $mode == overlay ]] && dirs=("$base/cell/overlay")
    added=$(du -sm "${dirs[@]}" | awk -v skip=$((${#dirs[@]} - 1)) 'NR > skip { s += $1 } END { print s }')
    "$here/cell.sh" down "$base/cell"
    cat "$base/cell/timings" >> "$base/all"
    echo "disk-MB $added" >> "$base/all"
    rm -rf "$base/cell"
  done
  echo "copy=$mode, $rounds rounds (ms; disk in MB):"
  awk '{ v[$1] = v[$1] " " $2; if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2; if ($2 > hi[$1]) hi[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
       END { for (i = 1; i <= n; i++) printf "  %-16s %6s .. %-6s (%s )\n", order[i], lo[order[i]], hi[order[i]], v[order[i]] }' "$base/all"
done
