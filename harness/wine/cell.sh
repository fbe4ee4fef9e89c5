#!/usr/bin/env bash
# One Wine cell's isolation: a private prefix copied from the template, a private TMPDIR on a tmpfs, its own
# wineserver, and an Xvfb display when asked.
#   cell.sh up <cell-dir> [--windows win7|win10] [--copy hardlink|overlay|full] [--display] [--tmpfs-mb N]
#   cell.sh down <cell-dir>
#   cell.sh down-all <dir>   (down for every <dir>/run-*: a killed harness's teardown)
#   cell.sh mark <run-dir> <pid>   (<run-dir>/started: when <pid> started, which with the pid names one process)
#   cell.sh live <run-dir>   (exit 0 when <run-dir>, a run-<pid>, is that process still: its pid with its start time)
# up writes <cell-dir>/env (KEY=VALUE lines: WINEPREFIX, TMPDIR, HOME, WINEDEBUG, WINEDLLOVERRIDES, DISPLAY) and
# prints it; launch the program with exactly that environment. <cell-dir>/runtime has wine=<wine --version> and
# windows=<what `ver` says>, for the runtime line. Run up inside the cell's cgroup: the wineserver and Xvfb it
# starts stay there, so the cell's memory cap and final kill cover them. down undoes all of it and
# is safe to call twice, or after a crash half-way through up.
# Copies: hardlink (default; the DLLs and data shared with the template by hard link, the files Wine rewrites in
# place copied), overlay (an overlayfs over the template; needs mount rights), full (cp -a).
# Wine itself: $WINE and $WINESERVER (default wine, wineserver), so a user's Wine build goes through here too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
template=${CORPUS_WINE_TEMPLATE:-$root/.cache/wine/template}
WINE=${WINE:-wine}
WINESERVER=${WINESERVER:-wineserver}
usage() { sed -n '4,8p' "$0" | sed 's/^# *//' >&2; exit 2; }
# When a process started: field 22 of /proc/PID/stat, counted after the command name, which may hold spaces. A pid
# alone is reused (pid_max is 32768 here, and a race's cell makes hundreds of runs); with its start time it is not.
started() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; s=${s##*) }; set -- $s; echo "${20}"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# Timings go to <cell>/timings as "piece ms" lines, for the harness's runtime line and for the docs' numbers.
timing() { echo "$1 $(( $(now_ms) - $2 ))" >> "$cell/timings"; }
# The env file is plain KEY=VALUE (no shell quoting), for the harness to read as it is.
load_env() { local k v; while IFS='=' read -r k v; do [[ -n $k ]] && export "$k=$v"; done < "$cell/env"; }

up() {
  local windows=win7 copy=hardlink display=0 tmpfs_mb=${CORPUS_WINE_TMPFS_MB:-4096}
  while (($#)); do
    case $1 in
      --windows) windows=${2:?}; shift 2 ;;
      --copy) copy=${2:?}; shift 2 ;;
      --display) display=1; shift ;;
      --tmpfs-mb) tmpfs_mb=${2:?}; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ -f $template/.corpus/version ]] || { echo "wine/cell: no template at $template (run harness/wine/template.sh)" >&2; exit 1; }
  [[ -d $template/.corpus/$windows ]] || { echo "wine/cell: --windows $windows: the template has $(ls "$template/.corpus" | grep -v version | tr '\n' ' ')" >&2; exit 2; }
  [[ ! -e $cell/prefix ]] || { echo "wine/cell: $cell is in use (run down first)" >&2; exit 1; }
  mkdir -p "$cell/home"
  : > "$cell/timings"

  # TMPDIR: its own tmpfs when we may mount (its usage is then the cell's page-file-backed sections alone),
  # else a private directory on /dev/shm.
  local t=$(now_ms)
  mkdir -p "$cell/tmp"
  if mount -t tmpfs -o "size=${tmpfs_mb}m,mode=700,nosuid,nodev" corpus-wine-tmp "$cell/tmp" 2>/dev/null; then
    tmpdir=$cell/tmp
  else
    tmpdir=$(mktemp -d /dev/shm/corpus-wine-tmp.XXXXXX)
    echo "$tmpdir" > "$cell/tmp.shm"
  fi
  timing tmpfs "$t"

  t=$(now_ms)
  case $copy in
    hardlink)
      # Hard links need the cell on the template's file system; elsewhere fall back to a full copy.
      cp -al "$template" "$cell/prefix" 2>/dev/null || { rm -rf "$cell/prefix"; cp -a --reflink=auto "$template" "$cell/prefix"; }
      # Real copies of the files Wine or a program rewrites in place (a write through a hard link would change
      # the template): the registry, *.ini, the update stamp, drivers/etc. The DLLs and .nls data stay linked.
      (cd "$template" && find . -path ./.corpus -prune -o -type f \( -name '*.reg' -o -iname '*.ini' \
         -o -name .update-timestamp -o -path '*/drivers/etc/*' \) -print0 |
         xargs -0 cp -p --remove-destination --parents -t "$cell/prefix")
      ;;
    overlay)
      mkdir -p "$cell/overlay/upper" "$cell/overlay/work" "$cell/prefix"
      mount -t overlay corpus-wine-prefix -o "lowerdir=$template,upperdir=$cell/overlay/upper,workdir=$cell/overlay/work" "$cell/prefix"
      ;;
    full) cp -a --reflink=auto "$template" "$cell/prefix" ;;
    *) usage ;;
  esac
  cp --remove-destination "$template/.corpus/$windows/"*.reg "$cell/prefix/"
  timing prefix "$t"

  cat > "$cell/env" <<ENV
WINEPREFIX=$cell/prefix
TMPDIR=$tmpdir
HOME=$cell/home
WINEDEBUG=-all
WINEDLLOVERRIDES=winemenubuilder.exe=d
ENV
  load_env

  # The server first, then one program, all away from the caller's pipes: Wine's background processes
  # (services.exe, winedevice.exe, ...) inherit stdout and would hold a reader such as ctest open until they exit.
  t=$(now_ms)
  "$WINESERVER" -p </dev/null >/dev/null 2>&1 || { echo "wine/cell: $WINESERVER -p failed" >&2; exit 1; }
  timing wineserver "$t"
  t=$(now_ms)
  # That first program is `cmd /c ver`: it also tells the Windows version Wine reports, for the runtime line.
  # Its stderr and status are kept for the failure's message: a first program that fails says why. It alone runs
  # with Wine's error channel on (the cell's programs keep -all): a process that dies while it starts says so there.
  local rc=0
  WINEDEBUG=-all,err+all "$WINE" cmd /c ver </dev/null >"$cell/ver" 2>"$cell/ver.stderr" || rc=$?
  if ((rc != 0)); then
    echo "wine/cell: $WINE cmd /c ver failed (exit $rc after $(($(now_ms) - t)) ms; stderr: $(tail -c 1200 "$cell/ver.stderr" | tr '\n' ' ')" \
         "; stdout: $(tail -c 200 "$cell/ver" | tr -d '\r' | tr '\n' ' '))" >&2
    exit 1
  fi
  timing wine-first "$t"
  { echo "wine=$("$WINE" --version 2>/dev/null)"; echo "windows=$(tr -d '\r' < "$cell/ver" | grep -m1 .)"; } > "$cell/runtime"
  rm -f "$cell/ver" "$cell/ver.stderr"

  if ((display)); then
    t=$(now_ms)
    # -displayfd: Xvfb picks a free display number itself and reports it; no guessing, no race.
    local out=$cell/xvfb.display
    : > "$out"
    date +%s > "$cell/xvfb.started"
    Xvfb -displayfd 3 -nolisten tcp -screen 0 1024x768x24 3>"$out" </dev/null >/dev/null 2>"$cell/xvfb.log" &
    echo $! > "$cell/xvfb.pid"
    local n=""
    for _ in $(seq 100); do n=$(tr -dc 0-9 < "$out"); [[ -n $n ]] && break; sleep 0.05; done
    [[ -n $n ]] || { echo "wine/cell: Xvfb did not start: $(cat "$cell/xvfb.log")" >&2; exit 1; }
    echo "DISPLAY=:$n" >> "$cell/env"
    timing xvfb "$t"
  fi
  cat "$cell/env"
}

down() {
  set +e  # tear down as much as there is, whatever failed before
  local t=$(now_ms)
  [[ -f $cell/timings ]] || : > "$cell/timings"
  if [[ -f $cell/env ]]; then
    local prefix; prefix=$(sed -n 's/^WINEPREFIX=//p' "$cell/env")
    # Never ourselves or whoever called us: a caller may have exported the cell's environment.
    local self=() p=$$
    while [[ $p =~ ^[0-9]+$ && $p -gt 1 ]]; do self+=("$p"); p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null); done
    # Every process of this cell carries its WINEPREFIX: wineserver, Wine's services, the program and its
    # children. SIGKILL them by pid (the cell is thrown away, so the registry need not be saved; a graceful
    # wineserver -k takes 0.76 s and leaves clients behind when the server is already gone).
    local pids=() p
    for ((round = 0; round < 100; round++)); do
      mapfile -t pids < <(grep -lzxF "WINEPREFIX=$prefix" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
      local alive=()
      for p in "${pids[@]}"; do
        [[ " ${self[*]} " == *" $p "* ]] && continue
        [[ $(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null) =~ ^[^Z]$ ]] && alive+=("$p")
      done
      ((${#alive[@]})) || break
      kill -KILL "${alive[@]}" 2>/dev/null
      sleep 0.02
    done
  fi
  timing down-processes "$t"; t=$(now_ms)
  if [[ -f $cell/xvfb.pid ]]; then
    local pid; pid=$(cat "$cell/xvfb.pid")
    # Only our Xvfb: the pid must still be an Xvfb process.
    if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == Xvfb ]]; then
      kill "$pid" 2>/dev/null || true
      # Gone or a zombie: up's shell has exited, so whoever adopted Xvfb reaps it, maybe late.
      for _ in $(seq 100); do [[ $(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) =~ ^[^Z]$ ]] || break; sleep 0.02; done
    fi
    # A SIGKILLed Xvfb (the cell's cgroup kill) leaves its socket (and lock, where it keeps one). Only our display's:
    # nobody listens on it now (/proc/net/unix) and the socket is no older than our Xvfb.
    local n; n=$(tr -dc 0-9 < "$cell/xvfb.display" 2>/dev/null)
    if [[ -n $n ]] && ! grep -q "/tmp/\.X11-unix/X$n\$" /proc/net/unix 2>/dev/null; then
      local sock=/tmp/.X11-unix/X$n since; since=$(cat "$cell/xvfb.started" 2>/dev/null)
      [[ -S $sock && -n $since && $(stat -c %Y "$sock") -ge $since ]] && rm -f "$sock"
      [[ $({ tr -dc 0-9 < "/tmp/.X$n-lock"; } 2>/dev/null) == "$pid" ]] && rm -f "/tmp/.X$n-lock"
    fi
    timing down-xvfb "$t"; t=$(now_ms)
  fi
  local m
  for m in "$cell/prefix" "$cell/tmp"; do
    mountpoint -q "$m" 2>/dev/null || continue
    umount "$m" 2>/dev/null || { echo "wine/cell: $m is busy: detached, freed when its last user goes" >&2; umount -l "$m"; }
  done
  [[ -f $cell/tmp.shm ]] && rm -rf "$(cat "$cell/tmp.shm")"
  rm -rf "$cell/prefix" "$cell/overlay" "$cell/tmp" "$cell/home" "$cell/env" "$cell/runtime" "$cell/tmp.shm" "$cell/xvfb.pid" "$cell/xvfb.display" "$cell/xvfb.started"
  timing down-files "$t"
}

(($# >= 2)) || usage
cmd=$1 cell=$2; shift 2
if [[ $cmd == down-all ]]; then
  [[ -d $cell ]] || exit 0
  for run in "$cell"/run-*; do [[ -d $run ]] && bash "$0" down "$run"; done
  exit 0
fi
# No folder, no cell: down has nothing to find (the env file names its processes) and must not make one (a lab's
# `trap … down` at exit, after the lab removed its folder, left an empty cell/ with a timings file behind).
[[ $cmd == down && ! -d $cell ]] && exit 0
case $cmd in
  mark) (($# == 1)) || usage; started "$1" > "$cell/started"; exit 0 ;;
  live) now=$(started "${cell##*/run-}"); [[ -n $now && $now == "$(cat "$cell/started" 2>/dev/null)" ]]; exit ;;
esac
mkdir -p "$cell"; cell=$(cd "$cell" && pwd)
case $cmd in
  up) up "$@" ;;
  down) down ;;
  *) usage ;;
esac
