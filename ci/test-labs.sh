#!/bin/bash
# Runs the labs as executable documentation: every block fenced as ```sh lab, in order, in one shell per lab, in a
# fresh clone of this checkout. A block passes when it exits 0 (it runs under `set -e`) and the expectations written
# just above it hold:
#   <!-- expect output: PHRASE -->   PHRASE occurs in the block's stdout+stderr (fixed string)
#   <!-- expect file: PATH -->       PATH exists after the block (shell-expanded: $pid, globs)
#   <!-- expect figure: NAME in LO..HI -->   the figure NAME the block measured lies in [LO, HI]
#   <!-- expect figure: NAME >= X -->        ... or holds the relation (>=, <=, >, <) to X
# A figure is the attendee's own number, so the prose may only state it as the range or relation the lab checks.
# The block prints it as a line `figure NAME=VALUE` (VALUE a plain number: `echo "figure rate_pct=$pct"`; the last
# such line counts), or the annotation ends in `from PATH JQ` and the value is `jq -r JQ PATH` after the block
# (PATH shell-expanded; a cell's record: `from artifacts/latest/<repro>/<case>/<variant>/<subject>/facts.json
# .family.facts.blockMs`). A figure that is missing, not a number or outside its range fails the lab, naming the
# block, the figure, the value and the range. A malformed annotation fails the lab before it runs.
# A lab passes when all its blocks pass and nothing is left behind: no process of its session (or carrying its
# token in the environment), no /dev/shm entry and no /tmp entry. Each lab gets a private /dev/shm and a private /tmp
# (tmpfs mounts in its own mount namespace, /tmp holding only an empty .X11-unix and .ICE-unix as a host's does), so
# entries made by other jobs on the host neither count nor get touched, and whatever the lab leaves there is listed.
# Labs work under artifacts/lab/<id>/ (or a folder they remove), never /tmp. What a lab keeps there when it ends, it
# says, with why: <!-- keeps: artifacts/lab/<id>/NAME: why --> (NAME may be a glob); anything else left there fails.
# The blocks run as a person's shell runs them: with no TMPDIR of the runner's (make's) in their environment. Nothing
# may be left in the source tree's lab programs (repros/<id>/lab/: an obj/ of a dotnet build there).
# Blocks fenced as ```sh lab-skip: REASON are reported and not run (e.g. they need real Windows).
#
# usage: ci/test-labs.sh [LAB_ID...]      (make test-labs [LAB=id]); LAB_TIMEOUT=seconds per lab (default 2400);
#        LAB_ROOT=<git checkout> runs that checkout's labs instead of this one's (ci/test-labs-planted.sh does);
#        KEEP_LAB_CLONE=1 keeps the clone and logs (build/test-labs.*) after a pass.
set -uo pipefail
# A reader runs a lab's `make run …` from a plain shell: nothing of the outer `make test-labs LAB=…` may leak into
# it (its variables would reach the inner make through MAKEFLAGS and be refused as unknown).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

root=$(cd "${LAB_ROOT:-$(dirname "$0")/..}" && pwd)
timeout_s=${LAB_TIMEOUT:-2400}
keep=${KEEP_LAB_CLONE:-}

die() { echo "test-labs: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (a private /dev/shm per lab is a tmpfs in a new mount namespace)"
command -v unshare >/dev/null || die "unshare (util-linux) not found"

labs=()
if [ $# -eq 0 ]; then
  for f in "$root"/docs/labs/*.md; do labs+=("$(basename "$f" .md)"); done
else
  for id in "$@"; do
    [ -f "$root/docs/labs/$id.md" ] || die "no lab '$id' (docs/labs/$id.md does not exist)"
    labs+=("$id")
  done
fi

# In the checkout's build/: each lab's /tmp is a private, empty tmpfs. A checkout that itself lives under /tmp stays
# visible there: the wrapper binds the work folder back into the private /tmp at the same path.
mkdir -p "$root/build"
work=$(mktemp -d "$root/build/test-labs.XXXXXX")
clone=$work/corpus
echo "test-labs: cloning $root (HEAD $(git -C "$root" rev-parse --short HEAD)) into $clone"
git clone -q "$root" "$clone" || die "git clone failed"
[ -n "$(git -C "$root" status --porcelain)" ] && echo "test-labs: note: uncommitted changes in $root are not in the clone"

# Splits a lab into blocks: $dir/N.sh (the commands), $dir/N.exp (kind<TAB>value lines), $dir/index (N line kind reason).
split_lab() {
  awk -v dir="$2" '
    function flush_pending() { pending = "" }
    /^<!-- expect (output|file|figure): .* -->[[:space:]]*$/ && !infence {
      line = $0; sub(/^<!-- expect /, "", line); sub(/[[:space:]]*-->[[:space:]]*$/, "", line)
      kind = line; sub(/:.*/, "", kind); val = line; sub(/^[a-z]+: /, "", val)
      pending = pending kind "\t" val "\t" NR "\n"; next
    }
    /^```/ && !infence {
      info = $0; sub(/^```[[:space:]]*/, "", info)
      infence = 1; n_kind = ""
      if (info ~ /^sh lab[[:space:]]*$/) { n_kind = "run"; reason = "" }
      else if (info ~ /^[A-Za-z0-9_-]+ lab-skip/) { n_kind = "skip"; reason = info; sub(/^[A-Za-z0-9_-]+ lab-skip:?[[:space:]]*/, "", reason) }
      if (n_kind != "") {
        n++; file = dir "/" n ".sh"; printf "" > file
        printf "%s", pending > (dir "/" n ".exp"); close(dir "/" n ".exp")
        printf "%d %d %s %s\n", n, NR, n_kind, reason > (dir "/index")
      }
      flush_pending(); next
    }
    /^```/ && infence { infence = 0; if (n_kind != "") close(file); n_kind = ""; next }
    infence && n_kind != "" { print > file; next }
    /^[[:space:]]*$/ { next }
    { flush_pending() }
  ' "$1"
  touch "$2/index"
}

# The figure annotation's grammar: NAME in LO..HI | NAME (>=|<=|>|<) X, then optionally `from PATH JQ`.
num='-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'
figure_re="^([A-Za-z_][A-Za-z0-9_.-]*) (in ($num)\.\.($num)|(>=|<=|>|<) ($num))( from ([^ ]+) (.+))?\$"

# Annotations that cannot be read fail the lab before it runs: a typo must not become a check that never happens.
check_annotations() { # lab-file dir
  local bad=0 n k v l
  while read -r n _; do
    while IFS=$'\t' read -r k v l; do
      [ "$k" = figure ] || continue
      if ! [[ $v =~ $figure_re ]]; then
        echo "    $1 line $l: malformed figure annotation \"$v\" (want NAME in LO..HI or NAME >= X, optionally from PATH JQ)"; bad=1
      elif [ -n "${BASH_REMATCH[3]}" ] && awk -v a="${BASH_REMATCH[3]}" -v b="${BASH_REMATCH[6]}" 'BEGIN { exit !(a + 0 > b + 0) }'; then
        echo "    $1 line $l: figure range ${BASH_REMATCH[3]}..${BASH_REMATCH[6]} is empty (LO > HI)"; bad=1
      fi
    done < "$2/$n.exp"
  done < "$2/index"
  return $bad
}

# The driver runs inside the lab's session: one shell, so `cd`, variables and `pid=$!` carry from block to block.
write_driver() {
  local dir=$1 lab=$2 drv=$1/driver.sh
  {
    echo '#!/bin/bash'
    echo "cd '$clone'"
    echo 'exec < /dev/null'
    echo 'unset TMPDIR    # a person'"'"'s shell has no TMPDIR of make'"'"'s'
    printf 'LAB=%q\nfigure_re=%q\n' "$lab" "$figure_re"
    cat <<'DRIVER'
fail() { echo "$*" >> "$D/failures"; return 1; }
check() { # block line kind value
  case $3 in
    output) grep -qF -- "$4" "$D/$1.out" || fail "block $1 (line $2): output lacks \"$4\"" ;;
    file) local f; f=$(eval "echo $4"); ls -d -- $f >/dev/null 2>&1 || fail "block $1 (line $2): no file $4 ($f)" ;;
    figure) figure "$@" ;;
  esac
}
# A figure from the block's `figure NAME=VALUE` lines or from a record (jq), checked against its range or relation.
figure() { # block line kind spec
  [[ $4 =~ $figure_re ]] || { fail "block $1 (line $2): malformed figure annotation \"$4\""; return 1; }
  local name=${BASH_REMATCH[1]} lo=${BASH_REMATCH[3]} hi=${BASH_REMATCH[6]} op=${BASH_REMATCH[9]} x=${BASH_REMATCH[10]}
  local path=${BASH_REMATCH[14]} query=${BASH_REMATCH[15]} v where stated
  if [ -n "$path" ]; then
    local file; file=$(eval "echo $path")
    where="jq -r '$query' $file"
    v=$(jq -r "$query" "$file" 2>&1) || { fail "lab $LAB block $1 (line $2): figure $name: $where failed: $v"; return 1; }
  else
    where="the block's \"figure $name=\" lines"
    v=$(grep -oE "(^|[[:space:]])figure $name=[^[:space:]]*" "$D/$1.out" | tail -1 | sed 's/^.*=//')
    [ -n "$v" ] || { fail "lab $LAB block $1 (line $2): figure $name was not printed (no line \"figure $name=VALUE\")"; return 1; }
  fi
  [[ $v =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || { fail "lab $LAB block $1 (line $2): figure $name = \"$v\" is not a number (from $where)"; return 1; }
  if [ -n "$op" ]; then stated="$op $x"; awk -v v="$v" -v x="$x" -v op="$op" 'BEGIN { v += 0; x += 0
      exit !((op == ">=" && v >= x) || (op == "<=" && v <= x) || (op == ">" && v > x) || (op == "<" && v < x)) }'
  else stated="in $lo..$hi"; awk -v v="$v" -v lo="$lo" -v hi="$hi" 'BEGIN { v += 0; exit !(v >= lo + 0 && v <= hi + 0) }'
  fi || { fail "lab $LAB block $1 (line $2): figure $name = $v, not $stated as the lab states (from $where)"; return 1; }
  echo "figure $name = $v ($stated)" >> "$D/figures"
}
DRIVER
    echo "D='$dir'"
    while read -r n line kind reason; do
      [ "$kind" = run ] || continue
      echo "echo \"start $n \$(date +%s.%N)\" >> \"\$D/status\""
      echo "set -e"
      echo "source \"\$D/$n.sh\" > \"\$D/$n.out\" 2>&1"
      echo "set +e"
      echo "echo \"end $n \$(date +%s.%N)\" >> \"\$D/status\""
      while IFS=$'\t' read -r k v l; do
        [ -n "$k" ] || continue
        printf 'check %s %s %s %q || exit 101\n' "$n" "$line" "$k" "$v"
      done < "$dir/$n.exp"
    done < "$dir/index"
    echo 'exit 0'
  } > "$drv"
}

# Runs in the lab's own mount namespace: private /dev/shm, the driver in a new session, then the leftover checks.
# Prints nothing of its own on success; writes $dir/leftovers and $dir/driver.rc.
cat > "$work/wrapper.sh" <<'EOF'
#!/bin/bash
dir=$1 timeout_s=$2 token=$3 work=$4
mount -t tmpfs -o mode=1777 lab-shm /dev/shm || { echo "cannot mount a private /dev/shm" > "$dir/leftovers"; exit 1; }
# A private /tmp as a host has it (X's socket folders exist); what the lab adds to it is its leftover. A work folder
# under /tmp (a checkout cloned there) is held by the working directory across the mount and bound back at its path
# (not canonicalized: "." must stay the hidden folder, not the new empty one of the same name).
under_tmp=; case $work/ in /tmp/*) under_tmp=1; cd "$work" ;; esac
mount -t tmpfs -o mode=1777 lab-tmp /tmp || { echo "cannot mount a private /tmp" > "$dir/leftovers"; exit 1; }
mkdir -m 1777 /tmp/.X11-unix /tmp/.ICE-unix
if [ -n "$under_tmp" ]; then
  mkdir -p "$work" && mount --no-canonicalize --bind . "$work" && cd / || { echo "cannot bind $work into the private /tmp" > "$dir/leftovers"; exit 1; }
fi
# The work folder is the runner's, not the lab's: left out of the /tmp listings.
tmp_entries() { find /tmp -mindepth 1 \( -path "$work" -prune \) -o -print | sort; }
tmp_entries > "$dir/tmp.before"
LAB_TEST_TOKEN=$token setsid bash "$dir/driver.sh" > "$dir/driver.log" 2>&1 &
sid=$!
deadline=$(( $(date +%s) + timeout_s ))
while kill -0 "$sid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
if kill -0 "$sid" 2>/dev/null; then
  echo "timed out after $timeout_s s" > "$dir/timeout"
  kill -TERM -- -"$sid" 2>/dev/null; sleep 2; kill -KILL -- -"$sid" 2>/dev/null
fi
wait "$sid"; echo $? > "$dir/driver.rc"
# Give processes that are already exiting a moment, then list what is left of the lab.
ours() {
  for p in /proc/[0-9]*; do
    p=${p#/proc/}; [ "$p" = $$ ] && continue
    s=$(awk '{print $6}' /proc/$p/stat 2>/dev/null) || continue
    if [ "$s" = "$sid" ] || grep -qa "LAB_TEST_TOKEN=$token" /proc/$p/environ 2>/dev/null; then echo "$p"; fi
  done
}
for i in 1 2 3 4 5 6; do [ -z "$(ours)" ] && break; sleep 0.5; done
: > "$dir/leftovers"
for p in $(ours); do
  echo "process $p left running: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-160)" >> "$dir/leftovers"
  kill -KILL "$p" 2>/dev/null
done
for f in /dev/shm/* /dev/shm/.[!.]*; do
  [ -e "$f" ] && echo "/dev/shm entry left behind: $(basename "$f") ($(stat -c %s "$f") bytes)" >> "$dir/leftovers"
done
# /tmp: each new path whose parent was there before (a new folder is listed once, with what it holds).
tmp_entries | comm -13 "$dir/tmp.before" - | while read -r f; do
  grep -qxF -- "$(dirname "$f")" "$dir/tmp.before" || [ "$(dirname "$f")" = /tmp ] || continue
  if [ -d "$f" ]; then what="folder of $(find "$f" -mindepth 1 | wc -l) entries, $(du -sb "$f" | cut -f1) bytes"
  else what="$(stat -c %s "$f" 2>/dev/null) bytes"; fi
  echo "/tmp entry left behind: $f ($what)" >> "$dir/leftovers"
done
exit 0
EOF

failed=0
summary=()
for lab in "${labs[@]}"; do
  dir=$work/$lab; mkdir -p "$dir"
  split_lab "$clone/docs/labs/$lab.md" "$dir"
  if ! bad=$(check_annotations "docs/labs/$lab.md" "$dir"); then
    echo "test-labs: $lab: FAIL before running"; echo "$bad"; failed=1; summary+=("$lab: malformed annotations"); continue
  fi
  runnable=$(awk '$3=="run"' "$dir/index" | wc -l); skipped=$(awk '$3=="skip"' "$dir/index" | wc -l)
  if [ "$runnable" -eq 0 ]; then
    echo "test-labs: $lab: FAIL, no block is fenced as \`\`\`sh lab"; failed=1; summary+=("$lab: no runnable blocks"); continue
  fi
  write_driver "$dir" "$lab"
  echo "test-labs: $lab: $runnable blocks ($skipped not runnable here), log in $dir"
  t0=$(date +%s)
  unshare --mount --propagation private bash "$work/wrapper.sh" "$dir" "$timeout_s" "$lab-$$-$RANDOM" "$work"
  secs=$(( $(date +%s) - t0 ))
  rc=$(cat "$dir/driver.rc" 2>/dev/null || echo "?")
  problems=()
  last=$(awk '$1=="start"{n=$2} END{print n}' "$dir/status" 2>/dev/null)
  if [ -f "$dir/timeout" ]; then problems+=("block $last (line $(awk -v n="$last" '$1==n{print $2}' "$dir/index")): $(cat "$dir/timeout")"); fi
  if [ "$rc" = 101 ]; then
    while read -r l; do problems+=("$l"); done < "$dir/failures"
  elif [ "$rc" != 0 ] && [ ! -f "$dir/timeout" ]; then
    problems+=("block $last (line $(awk -v n="$last" '$1==n{print $2}' "$dir/index")) exited $rc")
  fi
  while read -r l; do [ -n "$l" ] && problems+=("$l"); done < "$dir/leftovers"
  # What the lab left under artifacts/lab/<id>/ and did not say it keeps (<!-- keeps: PATH: why -->).
  kept=$(sed -nE 's/^<!-- keeps: ([^ :]+)(:.*)? -->[[:space:]]*$/\1/p' "$clone/docs/labs/$lab.md")
  if [ -d "$clone/artifacts/lab/$lab" ]; then
    while read -r f; do
      rel=${f#"$clone/"}; announced=
      for k in $kept; do [[ $rel == $k ]] && announced=1; done
      [ -n "$announced" ] || problems+=("artifacts/lab entry left behind unannounced: $rel ($(du -sb "$f" | cut -f1) bytes; a lab removes it, or says <!-- keeps: $rel: why -->)")
    done < <(find "$clone/artifacts/lab/$lab" -mindepth 1 -maxdepth 1 | sort)
  fi
  # A lab program built in the source tree (repros/<id>/lab/) leaves its obj/ and bin/ there unless it builds elsewhere.
  while read -r _ f; do
    problems+=("source tree entry left behind: $f (build a lab program into artifacts/lab/$lab/, or remove it)")
  done < <(git -C "$clone" status --porcelain --ignored -- 'repros/*/lab' 2>/dev/null)
  # Per block: seconds and result.
  while read -r n line kind reason; do
    if [ "$kind" = skip ]; then printf '  block %2d (line %3d): not runnable here: %s\n' "$n" "$line" "$reason"; continue; fi
    s=$(awk -v n="$n" '$1=="start"&&$2==n{a=$3} $1=="end"&&$2==n{b=$3} END{if(a&&b) printf "%.1f s", b-a; else if(a) print "failed"; else print "not reached"}' "$dir/status" 2>/dev/null)
    printf '  block %2d (line %3d): %s\n' "$n" "$line" "$s"
  done < "$dir/index"
  [ -f "$dir/figures" ] && sed 's/^/  /' "$dir/figures"
  if [ ${#problems[@]} -eq 0 ]; then
    echo "test-labs: $lab: PASS in $secs s"; summary+=("$lab: pass, $secs s")
  else
    failed=1
    echo "test-labs: $lab: FAIL in $secs s"; for p in "${problems[@]}"; do echo "    $p"; done
    [ -n "$last" ] && [ -f "$dir/$last.out" ] && { echo "    last output of block $last:"; tail -15 "$dir/$last.out" | sed 's/^/      /'; }
    summary+=("$lab: FAIL, $secs s")
  fi
done

echo "test-labs: ${summary[*]/%/;}"
if [ -z "$keep" ] && [ $failed -eq 0 ]; then rm -rf "$work"; else echo "test-labs: logs kept in $work"; fi
exit $failed
