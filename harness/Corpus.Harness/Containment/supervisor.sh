#!/usr/bin/env bash
# The corpus supervisor: the dead-man switch of one harness process (see Supervisor.cs, docs/architecture.md).
# stdin is a pipe whose only write end the harness holds. The harness writes "cg DIR" / "pg PGID START" when a run's
# cgroup or process group comes to exist, "wine CELL_SH DIR" for a Wine cell's folder (its runs' prefixes and
# tmpfs mounts), and the same line prefixed with "-" when it is gone. EOF means the harness
# is gone, killed or not: whatever is still listed belonged to a run it did not finish, so kill it and remove it.
# Usage: bash supervisor.sh HARNESS_PID   (started in its own session, outside every run cgroup)
# Ctrl-C or a SIGTERM of the harness's group must not stop the one process that cleans up after the harness.
trap '' INT TERM HUP
owner=$1
declare -A live=()
while IFS= read -r line; do
  case $line in
    -?*) unset "live[${line:1}]" ;;
    ?*) live[$line]=1 ;;
  esac
done
((${#live[@]})) || exit 0

# Field 22 of /proc/PID/stat (start time), or nothing when no such process.
start_of() {
  local stat
  { stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 0
  stat=${stat##*) }
  read -ra f <<<"$stat"
  echo "${f[19]}"
}

cgroups=() groups=() wines=()
for entry in "${!live[@]}"; do
  read -r kind what start _ <<<"$entry"
  case $kind in
    cg) cgroups+=("$what") ;;
    wine) wines+=("$what $start") ;;
    # The kernel never hands out a pid that is still some group's id, so the group number is ours unless its
    # leader is gone and a new process now has that pid (another start time): then the group is empty anyway.
    pg) now=$(start_of "$what"); [[ -z $now || $now == "$start" ]] && groups+=("$what") ;;
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
# Wine cells last: their processes are dead now, so their tmpfs mounts can go.
for w in "${wines[@]}"; do
  read -r cellsh dir <<<"$w"
  for run in "$dir"/run-*; do [[ -d $run ]] && bash "$cellsh" down "$run" >/dev/null 2>&1; done
done
echo "corpus-supervisor: harness $owner ended mid-run: killed ${#killed[@]} process(es) and group(s), removed $removed cgroup(s)" >&2
