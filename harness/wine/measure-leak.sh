#!/usr/bin/env bash
# The filemapping-leak Win32 program under Wine, measured from Linux by hand (before the harness has a wine
# subject): one Wine cell (cell.sh) inside a memory cgroup made for the run, TMPDIR on the cell's tmpfs.
#   measure-leak.sh <filemapping_leak_win32.exe> <bug|fix> [count] [sizeMB]
# Prints, while the program holds its sections and after it exits: the cgroup's shmem, the tmpfs's usage, the
# program's RSS, the deleted tmpmap files held by fd by the program and by wineserver, the lost-memory
# finder's view, and the Win32 counters the program printed. Exits non-zero when bug does not leak or fix does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
exe=$(realpath "${1:?usage: measure-leak.sh <exe> <bug|fix> [count] [sizeMB]}") variant=${2:?bug or fix}
count=${3:-8} size_mb=${4:-64}
finder=$root/build/harness/LostMemory/LostMemory.dll
[[ -f $finder ]] || { echo "measure-leak: no $finder (run ci/setup.sh)" >&2; exit 1; }

# A memory cgroup below our own, on cgroup v1 or v2.
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
  parent=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup); stat_key=shmem
else
  parent=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup); stat_key=shmem
fi
cg=$parent/corpus-wine-measure-$$
cell=$(mktemp -d "$root/.cache/wine/measure.XXXXXX")
cleanup() {
  "$here/cell.sh" down "$cell/cell" >/dev/null 2>&1 || true
  echo $$ > "$parent/cgroup.procs" 2>/dev/null || true
  [[ -d $cg ]] && { rmdir "$cg" 2>/dev/null || echo "measure-leak: $cg still has: $(cat "$cg/cgroup.procs" | tr '\n' ' ')" >&2; }
  rm -rf "$cell"
}
trap cleanup EXIT
mkdir "$cg"
echo $$ > "$cg/cgroup.procs"  # this shell and all it starts: cell.sh's wineserver, the program, Wine's services

cg_shmem_mb() { awk -v k="$stat_key" '$1 == k { printf "%.0f", $2 / 1048576 }' "$cg/memory.stat"; }
tmpfs_mb() { df -k --output=used "$TMPDIR" | awk 'NR == 2 { printf "%.0f", $1 / 1024 }'; }
# Deleted tmpmap files a process holds by fd only (Wine's shared user data page is mapped as well: left out).
fd_tmpmaps() {
  local pid=$1 n=0 l
  for l in /proc/"$pid"/fd/*; do
    local t; t=$(readlink "$l" 2>/dev/null) || continue
    [[ $t == */tmpmap-*" (deleted)" ]] || continue
    grep -qF "${t% (deleted)}" /proc/"$pid"/maps 2>/dev/null && continue
    n=$((n + 1))
  done
  echo $n
}
proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

"$here/cell.sh" up "$cell/cell" >/dev/null
while IFS='=' read -r k v; do export "$k=$v"; done < "$cell/cell/env"
# The first process of the cgroup whose comm (or, with "cmdline", command line) matches a pattern.
find_proc() {
  local p
  for p in $(cat "$cg/cgroup.procs"); do
    if [[ $1 == comm ]]; then [[ $(cat "/proc/$p/comm" 2>/dev/null) == $2 ]] && { echo "$p"; return; }
    else [[ $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null) == $2 ]] && { echo "$p"; return; }; fi
  done
  return 0
}
server=$(find_proc comm 'wineserver*')
echo "cell: $cell/cell, TMPDIR $TMPDIR (tmpfs), cgroup $cg, wineserver $server"
echo "before:  cgroup shmem $(cg_shmem_mb) MB, tmpfs $(tmpfs_mb) MB"

out=$cell/out
${WINE:-wine} "$exe" "$variant" "$count" "$size_mb" 4 </dev/null >"$out" 2>&1 &
runner=$!
for _ in $(seq 300); do grep -q REPRO-REACHED "$out" && break; sleep 0.05; done
grep -q REPRO-REACHED "$out" || { cat "$out" >&2; echo "measure-leak: the program did not reach the marker" >&2; exit 1; }
name=$(basename "$exe"); prog=$(find_proc comm "${name:0:15}")  # Wine names the process after the .exe
held_shmem=$(cg_shmem_mb) held_tmpfs=$(tmpfs_mb) prog_fds=$(fd_tmpmaps "$prog") server_fds=$(fd_tmpmaps "$server")
echo "program: pid $prog, started as pid $runner ($([[ $prog == "$runner" ]] && echo "the same process" || echo "another process"))"
echo "holding: cgroup shmem $held_shmem MB, tmpfs $held_tmpfs MB; program $prog ($(cat /proc/$prog/comm)) VmRSS $(proc_kb "$prog" VmRSS) kB RssShmem $(proc_kb "$prog" RssShmem) kB; fd-only tmpmap files: program $prog_fds, wineserver $server_fds"
echo "finder (program and wineserver rows, then two of their objects):"
dotnet "$finder" --objects > "$cell/finder" || true
grep -E "^ *($prog|$server) " "$cell/finder" | sed 's/^ */  /' || true
grep -m2 -E "WineSection +fd-only" "$cell/finder" | sed 's/^ */  /' || true
wait "$runner"
sed -n 's/^METRIC /program METRIC: /p' "$out"
sleep 0.2
after_shmem=$(cg_shmem_mb) after_tmpfs=$(tmpfs_mb) after_fds=$(fd_tmpmaps "$server")
echo "exited:  cgroup shmem $after_shmem MB, tmpfs $after_tmpfs MB; fd-only tmpmap files in wineserver $after_fds"
t=$(date +%s%N); "$here/cell.sh" down "$cell/cell"; t=$(( ($(date +%s%N) - t) / 1000000 ))
# What is left in the cgroup besides this shell (read without a subshell, which would count itself).
mapfile -t procs < "$cg/cgroup.procs"; left=()
for p in "${procs[@]}"; do [[ $p == "$$" ]] || left+=("$p:$(< "/proc/$p/comm")"); done
echo "down:    $t ms; left in the cgroup: ${left[*]:-nothing}"

leak=$((count * size_mb))
if [[ $variant == bug ]]; then
  # wineserver may hold more sections of its own: a .NET program's 2 TiB executable-memory double mapping.
  ((held_tmpfs >= leak * 95 / 100 && prog_fds == count && server_fds >= count)) || { echo "measure-leak: bug did not show the leak" >&2; exit 1; }
else
  ((held_tmpfs < leak / 10 && prog_fds == 0)) || { echo "measure-leak: fix held memory" >&2; exit 1; }
fi
((after_tmpfs < leak / 10 && after_fds == 0)) || { echo "measure-leak: memory still held after exit" >&2; exit 1; }
