#!/usr/bin/env bash
# One run of a wine subject: run.sh <cell-dir> <win7|win10> <0|1 display> -- <program.exe> [args…]
# Started by the harness inside the run's own cgroup, so the wineserver and Wine's services that `up` starts are
# charged to the run and die with it. Each run brings up its own prefix in <cell-dir>/run-<pid> (races run two at
# a time), first taking down what finished runs of the cell left behind, then execs the program, keeping this pid:
# the harness's process is the Windows program.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
(($# >= 5)) && [[ $4 == -- ]] || { echo "usage: run.sh <cell-dir> <win7|win10> <0|1> -- program [args…]" >&2; exit 2; }
base=$1 windows=$2 display=$3; shift 4
# A Wine trace (the harness's WINEDEBUG backend): CORPUS_WINEDEBUG is the channel list, which replaces the prefix's
# WINEDEBUG=-all, and CORPUS_WINEDEBUG_LOG the file Wine's stderr goes to, debug lines and the program's own stderr
# alike. Straight to a file, because a filter process between them dies with the run's cgroup before it drains: an
# awk splitting the stream lost every line after the worker's SetParent.
run_wine() {
  [[ -n ${CORPUS_WINEDEBUG:-} ]] || exec "${WINE:-wine}" "$@"
  export WINEDEBUG=$CORPUS_WINEDEBUG
  [[ -n ${CORPUS_WINEDEBUG_LOG:-} ]] || exec "${WINE:-wine}" "$@"
  exec "${WINE:-wine}" "$@" 2>>"$CORPUS_WINEDEBUG_LOG"
}
# Wine's client joins the server whose socket is $TMPDIR/<the name in $WINEPREFIX/wineserver>/server-<dev>-<inode of
# the prefix>/socket (Debian's patch; /run/user/<uid>/wine/… where that folder exists). When it is not there, the
# client starts a server of its own, and exits with that server's status, printing nothing, when it fails: a run that
# never reached the program. Say so instead, with what was found (the harness makes such a run an error, not a verdict).
check_server() {
  local uid root name sock
  uid=$(id -u)
  if [[ -d /run/user/$uid ]]; then root=/run/user/$uid/wine
  elif name=$(cat "$WINEPREFIX/wineserver" 2>/dev/null) && [[ -n $name ]]; then root=${TMPDIR:-/tmp}/$name
  else
    echo "CORPUS-LAUNCH-FAILED wine: $WINEPREFIX/wineserver is missing or empty: the cell's wineserver never recorded its folder" >&2
    exit 97
  fi
  sock=$root/server-$(printf '%x-%x' "$(stat -c %d "$WINEPREFIX")" "$(stat -c %i "$WINEPREFIX")")/socket
  [[ -S $sock ]] && return 0
  echo "CORPUS-LAUNCH-FAILED wine: no wineserver socket at $sock for $WINEPREFIX (in $root: $(ls -A "$root" 2>&1 | tr '\n' ' '))" >&2
  exit 97
}
mkdir -p "$base"
# A cell with a registry fixture keeps one prefix for all its runs (the harness's WineIsolation brought it up, and
# its wineserver lives in the harness's holder for it): join that server instead of making a prefix.
if [[ -n ${CORPUS_WINE_SHARED:-} ]]; then
  [[ -f $CORPUS_WINE_SHARED/env ]] || { echo "run.sh: no shared prefix at $CORPUS_WINE_SHARED" >&2; exit 2; }
  cp "$CORPUS_WINE_SHARED/runtime" "$base/runtime" 2>/dev/null || true
  while IFS='=' read -r k v; do [[ -n $k ]] && export "$k=$v"; done < "$CORPUS_WINE_SHARED/env"
  check_server
  run_wine "$@"
fi
# Runs start two at a time: one at a time takes down finished runs, or two remove the same folder and one fails.
exec {lock}>"$base/.down.lock"
flock "$lock"
for old in "$base"/run-*; do
  [[ -d $old ]] || continue
  pid=${old##*/run-}
  [[ $pid == shared ]] && continue
  # A live run of this cell (run.sh, then its program, keep this pid and start time) is not ours to take down. A
  # finished run's pid may live again in another process, this run included (pid_max is 32768 here, and a race's
  # cell makes hundreds of runs): its folder is stale all the same, and one of our own pid would stop our `up`.
  [[ $pid != "$$" ]] && "$here/cell.sh" live "$old" && continue
  "$here/cell.sh" down "$old" >/dev/null 2>&1 || true
  rm -rf "$old"
done
cell=$base/run-$$
mkdir -p "$cell"
"$here/cell.sh" mark "$cell" $$
exec {lock}>&-
up=(up "$cell" --windows "$windows"); [[ $display == 1 ]] && up+=(--display)
# A prefix that does not come up is a run that never reached the program (a fresh-clone gate, 2026-11-28: `cmd /c
# ver` printed "Application could not be started" in one run of 150): say so with cell.sh's words, so that the
# harness keeps them and starts the run again instead of judging it. Its other lines reach the run's stderr as before.
up_rc=0
up_err=$("$here/cell.sh" "${up[@]}" 2>&1 >/dev/null) || up_rc=$?
if ((up_rc != 0)); then
  echo "CORPUS-LAUNCH-FAILED wine: the run's prefix did not come up (cell.sh up exit $up_rc): $(tail -c 900 <<< "$up_err" | tr '\n' ' ')" >&2
  exit 97
fi
[[ -z $up_err ]] || printf '%s\n' "$up_err" >&2
cp "$cell/runtime" "$base/runtime" 2>/dev/null || true
while IFS='=' read -r k v; do [[ -n $k ]] && export "$k=$v"; done < "$cell/env"
check_server
run_wine "$@"
