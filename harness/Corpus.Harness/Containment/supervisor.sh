#!/usr/bin/env bash
# The corpus supervisor: the dead-man switch of one harness process (see Supervisor.cs, docs/architecture.md).
# stdin is a pipe whose only write end the harness holds. The harness writes ledger lines (LedgerEntry.cs): "cg DIR"
# and "pg PGID START" when a run's cgroup or process group comes to exist, "tool PGID START" for a tool the harness
# runs (ToolRunner: gdb, createdump, a build), "teardown COMMAND ARG..." for what a
# subject kind must undo (a Wine cell's prefixes, tmpfs mounts and display), and the same line prefixed with "-" when
# it is gone. Fields are separated by single spaces; in a field, %, space, tab, CR, LF and backslash are %XX (hex).
# EOF means the harness is gone, killed or not: whatever is still listed belonged to a run it did not finish, so kill
# it and remove it; then remove the harness's own .NET IPC files, which only a clean exit of the runtime removes.
# Usage: bash supervisor.sh HARNESS_PID [HARNESS_PID-START]   (started in its own session, outside every run cgroup)
# Ctrl-C or a SIGTERM of the harness's group must not stop the one process that cleans up after the harness.
trap '' INT TERM HUP
owner=$1 key=${2:-}
declare -A live=()
while IFS= read -r line; do
  case $line in
    -?*) unset "live[${line:1}]" ;;
    ?*) live[$line]=1 ;;
  esac
done

# The runtime's debugger pipes and diagnostic socket are named after the pid and its start time (field 22 of
# /proc/PID/stat), which is the owner's key: these files are this harness's and no one else's.
if [[ $key =~ ^[0-9]+-[0-9]+$ ]]; then
  for dir in "${TMPDIR:-/tmp}" /tmp; do
    rm -f "$dir/clr-debug-pipe-$key-in" "$dir/clr-debug-pipe-$key-out" "$dir/dotnet-diagnostic-$key-socket" 2>/dev/null
  done
fi
((${#live[@]})) || exit 0

# One field of a ledger line, decoded: %XX becomes the character.
decode() { local s=${1//%/\\x}; printf -v REPLY '%b' "$s"; }

# Field 22 of /proc/PID/stat (start time), or nothing when no such process.
start_of() {
  local stat
  { stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
  stat=${stat##*) }
  read -ra f <<<"$stat"
  echo "${f[19]}"
}

cgroups=() groups=() teardowns=()
for entry in "${!live[@]}"; do
  read -ra fields <<<"$entry"
  case ${fields[0]} in
    cg) decode "${fields[1]}"; cgroups+=("$REPLY") ;;
    # Kept encoded: one line per command, decoded when it runs.
    teardown) teardowns+=("${fields[*]:1}") ;;
    # The kernel never hands out a pid that is still some group's id, so the group number is ours unless its
    # leader is gone and a new process now has that pid (another start time): then the group is empty anyway.
    pg | tool) now=$(start_of "${fields[1]}"); [[ -z $now || $now == "${fields[2]}" ]] && groups+=("${fields[1]}") ;;
  esac
done
declare -A killed=()
for pg in "${groups[@]}"; do kill -KILL -- "-$pg" 2>/dev/null && killed[g$pg]=1; done
removed=0
for dir in "${cgroups[@]}"; do
  # cgroup v2: one write kills every member, forks included.
  [[ -e $dir/cgroup.kill ]] && echo 1 >"$dir/cgroup.kill" 2>/dev/null
  # v1 has no cgroup.kill: kill the members until none is left (a member may fork while we kill).
  for ((i = 0; i < 250; i++)); do
    { pids=$(<"$dir/cgroup.procs"); } 2>/dev/null || break
    [[ -z $pids ]] && break
    # shellcheck disable=SC2086  # one pid per word
    kill -KILL $pids 2>/dev/null
    for pid in $pids; do killed[$pid]=1; done
    sleep 0.02
  done
  for ((i = 0; i < 100; i++)); do
    [[ -d $dir ]] || break
    rmdir "$dir" 2>/dev/null && { removed=$((removed + 1)); break; }
    sleep 0.02
  done
done
# Teardowns last: the runs' processes are dead now, so what they used (mounts, a display) can go.
for t in "${teardowns[@]}"; do
  cmd=()
  read -ra parts <<<"$t"
  for f in "${parts[@]}"; do decode "$f"; cmd+=("$REPLY"); done
  timeout 60 "${cmd[@]}" </dev/null >/dev/null 2>&1
done
echo "corpus-supervisor: harness $owner ended mid-run: killed ${#killed[@]} process(es) and group(s), removed $removed cgroup(s)," \
     "ran ${#teardowns[@]} teardown(s)" >&2
