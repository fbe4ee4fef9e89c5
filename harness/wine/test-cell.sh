#!/usr/bin/env bash
# Checks the per-cell Wine isolation (cell.sh) for real: two cells at once never share a prefix, server or display;
# each reports the Windows version it was asked for; writes in a cell's prefix never reach the template; down ends every process of its cell (a program left running
# included) and leaves no mount, prefix, Xvfb or X socket, without touching the other cell or the template; run.sh joins
# a cell's server, or names the socket it could not find. Run by make unit.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
template=${CORPUS_WINE_TEMPLATE:-$root/.cache/wine/template}
base=$(mktemp -d "$root/.cache/wine/test-cell.XXXXXX")
a=$base/a b=$base/b
trap '"$here/cell.sh" down "$a" >/dev/null 2>&1; "$here/cell.sh" down "$b" >/dev/null 2>&1; rm -rf "$base"' EXIT
failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
cell_pids() { grep -lzxF "WINEPREFIX=$1/prefix" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
alive() { [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) =~ ^[^Z]$ ]]; }
run_in() {  # cell, command...: run under Wine with the cell's environment
  local cell=$1; shift
  local e=(); while IFS= read -r l; do e+=("$l"); done < "$cell/env"
  env "${e[@]}" "$@"
}
reg_sums() { md5sum "$template"/*.reg "$template"/.corpus/*/*.reg "$template/drive_c/windows/win.ini"; }

sums_before=$(reg_sums)
"$here/cell.sh" up "$a" --windows win7 >/dev/null & up_a=$!
"$here/cell.sh" up "$b" --windows win10 --display >/dev/null & up_b=$!
check "cell a comes up" wait $up_a
check "cell b comes up (with a display)" wait $up_b

check "a reports Windows 7" grep -qx 'windows=Microsoft Windows 6.1.7601' "$a/runtime"
check "b reports Windows 10" grep -qx 'windows=Microsoft Windows 10.0.18362' "$b/runtime"
check "the cells have their own server directories" test "$(cat "$a/prefix/wineserver")" != "$(cat "$b/prefix/wineserver")"
check "a's server directory is in a's TMPDIR" test -d "$a/tmp/$(cat "$a/prefix/wineserver")"
servers() { local p; for p in $(cell_pids "$1"); do [[ $(cat "/proc/$p/comm" 2>/dev/null) == wineserver* ]] && echo "$p"; done; }
check "one wineserver per cell" test "$(servers "$a" | wc -l):$(servers "$b" | wc -l)" == 1:1
check "only b has a display" bash -c "! grep -q ^DISPLAY= '$a/env' && grep -q '^DISPLAY=:[0-9]' '$b/env'"
xvfb=$(cat "$b/xvfb.pid")
check "b's Xvfb runs" alive "$xvfb"

# Writes in a's prefix, in place, as a program would: the template must not see them.
run_in "$a" wine cmd /c 'echo [corpus-test] >> C:\windows\win.ini' </dev/null >/dev/null 2>&1
run_in "$a" wine reg add 'HKCU\Software\CorpusTest' /v x /d y /f </dev/null >/dev/null 2>&1
check "a's win.ini took the write" grep -q corpus-test "$a/prefix/drive_c/windows/win.ini"

# A program left running in a, as a hung or forgotten child would be.
run_in "$a" wine ping -n 60 127.0.0.1 </dev/null >/dev/null 2>&1 &
sleep 1
a_pids=$(cell_pids "$a")
check "a has its program and Wine's services" test "$(echo "$a_pids" | wc -w)" -ge 4

# run.sh joins a cell's server (as a fixture's runs join theirs), and says so when the server's socket is not where
# Wine's client will look, rather than letting the client start a server of its own and exit without a word.
joined=$(CORPUS_WINE_SHARED=$a bash "$here/run.sh" "$base/runs" win7 0 -- cmd /c echo joined </dev/null 2>&1)
check "run.sh joins the cell's server" grep -q joined <<< "$joined"
sock=$(echo "$a/tmp/$(cat "$a/prefix/wineserver")"/server-*/socket)
mv "$sock" "$sock.away"
gone=$(CORPUS_WINE_SHARED=$a bash "$here/run.sh" "$base/runs" win7 0 -- cmd /c echo joined </dev/null 2>&1); rc=$?
mv "$sock.away" "$sock"
check "without the socket, run.sh exits 97 naming the stage and the socket" \
  test "$rc" == 97 -a -n "$(grep -F "CORPUS-LAUNCH-FAILED wine: no wineserver socket at $sock" <<< "$gone")"
"$here/cell.sh" down "$a"
left=0; for p in $a_pids; do alive "$p" && left=$((left + 1)); done
check "down a ended every process of a" test "$left" == 0
check "down a unmounted a's tmpfs" bash -c "! mountpoint -q '$a/tmp'"
check "down a removed a's prefix" test ! -e "$a/prefix"
b_works() { run_in "$b" wine cmd /c exit </dev/null >/dev/null 2>&1; }
check "b still works after a's down" b_works
n=$(tr -dc 0-9 < "$b/xvfb.display")
check "b's display has its socket" test -S "/tmp/.X11-unix/X$n"
# As the cell's cgroup kill does before down runs: Xvfb gets no time to remove its socket (and lock), so down must.
kill -KILL "$xvfb"
"$here/cell.sh" down "$b"
check "down b removed the socket and lock of b's killed Xvfb" test ! -e "/tmp/.X11-unix/X$n" -a ! -e "/tmp/.X$n-lock"
check "down b ended b's Xvfb" bash -c "! [[ \$(awk '{ print \$3 }' /proc/$xvfb/stat 2>/dev/null) =~ ^[^Z]\$ ]]"
check "nothing of b is left" test -z "$(cell_pids "$b" | while read -r p; do alive "$p" && echo "$p"; done)"
check "down is safe twice" "$here/cell.sh" down "$b"
check "down-all of a folder that is gone does nothing" bash -c "'$here/cell.sh' down-all '$base/gone' && test ! -e '$base/gone'"
check "down of a cell whose folder is gone does nothing, and makes no folder" bash -c "'$here/cell.sh' down '$base/gone-cell' && test ! -e '$base/gone-cell'"
# A first program that fails says why: its status and stderr, with Wine's error channel on, reach the message (a
# planted wine that fails on `ver` and echoes the WINEDEBUG it was given).
mkdir -p "$base/fakewine"
printf '#!/bin/sh\n[ "$1 $2 $3" = "cmd /c ver" ] && { echo "err:planted: boom with WINEDEBUG=$WINEDEBUG" >&2; exit 3; }\nexec wine "$@"\n' > "$base/fakewine/wine"
chmod +x "$base/fakewine/wine"
failed=$(WINE="$base/fakewine/wine" "$here/cell.sh" up "$base/planted" 2>&1 >/dev/null); rc=$?
"$here/cell.sh" down "$base/planted"
check "a first program that fails gives its exit status and stderr, Wine's errors on" \
  bash -c "test $rc != 0 && grep -q 'cmd /c ver failed (exit 3 after [0-9]* ms; stderr: err:planted: boom with WINEDEBUG=-all,err+all' <<< '$failed'"
# In a run, the same failure is the launcher's, never the program's: run.sh says so in the harness's words.
said=$(WINE="$base/fakewine/wine" bash "$here/run.sh" "$base/runs-planted" win7 0 -- cmd /c echo reached </dev/null 2>&1); rc=$?
for old in "$base/runs-planted"/run-*; do "$here/cell.sh" down "$old" >/dev/null 2>&1; done
check "a run whose prefix does not come up exits 97 with CORPUS-LAUNCH-FAILED and cell.sh's words, not the program's" \
  bash -c "test $rc == 97 && grep -q '^CORPUS-LAUNCH-FAILED wine: the run.s prefix did not come up (cell.sh up exit 1): .*cmd /c ver failed (exit 3 after' <<< \"\$1\" && ! grep -q reached <<< \"\$1\"" _ "$said"
# A run folder left by an earlier run whose pid is this run's own (pids are reused) is stale: run.sh takes it down and
# comes up, where it used to stop at "is in use". The planted shell makes the folder, then execs run.sh on its pid;
# a folder of a live process of another start time (a sleep's pid, not the run's) is taken down too.
sleep 60 & other=$!
said=$(bash -c 'mkdir -p "$1/run-$$/prefix" "$1/run-$3/prefix"; echo 1 > "$1/run-$3/started"; exec bash "$2/run.sh" "$1" win7 0 -- cmd /c echo reached' \
       _ "$base/runs-reused" "$here" "$other" </dev/null 2>&1); rc=$?
kill "$other" 2>/dev/null
for old in "$base/runs-reused"/run-*; do "$here/cell.sh" down "$old" >/dev/null 2>&1; done
check "a run whose pid names a stale folder takes it down and reaches the program" \
  bash -c "test $rc == 0 && grep -q reached <<< \"\$1\" && ! grep -q 'in use' <<< \"\$1\"" _ "$said"
check "a stale folder of a reused pid that is not the run is taken down" test ! -e "$base/runs-reused/run-$other"
check "the template's registry and win.ini are untouched" test "$(reg_sums)" == "$sums_before"
((failures == 0)) || { echo "wine/test-cell: $failures check(s) failed" >&2; exit 1; }
