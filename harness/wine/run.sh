#!/usr/bin/env bash
# One run of a wine subject: run.sh <cell-dir> <win7|win10> <0|1 display> -- <program.exe> [args…]
# Started by the harness inside the run's own cgroup, so the wineserver and Wine's services that `up` starts are
# charged to the run and die with it. A cell's earlier run left its prefix behind (its processes died with that
# run's cgroup): take it down first, then bring a fresh one up from the template, and exec the program, keeping
# this pid, so the harness's process is the Windows program.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
(($# >= 5)) && [[ $4 == -- ]] || { echo "usage: run.sh <cell-dir> <win7|win10> <0|1> -- program [args…]" >&2; exit 2; }
cell=$1 windows=$2 display=$3; shift 4
[[ -e $cell/prefix ]] && "$here/cell.sh" down "$cell" >/dev/null
up=(up "$cell" --windows "$windows"); [[ $display == 1 ]] && up+=(--display)
"$here/cell.sh" "${up[@]}" >/dev/null
while IFS='=' read -r k v; do [[ -n $k ]] && export "$k=$v"; done < "$cell/env"
exec "${WINE:-wine}" "$@"
