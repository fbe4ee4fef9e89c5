#!/usr/bin/env bash
# ci/test-labs.sh must be able to fail: four planted labs in a throwaway checkout, run through it in one go.
#   planted-pass      a figure in its range from the block's output and a relation read from a record: passes;
#   planted-figure    a figure outside the range the lab states: fails, naming lab, block, figure, value and range;
#   planted-tmp       a block that leaves a file and a folder in /tmp: fails, listing both (in the lab's private /tmp,
#                     so the host's /tmp never sees them);
#   planted-malformed an annotation test-labs cannot read: fails before the lab runs;
#   planted-kept      a block that leaves two files under artifacts/lab/<id>/ and announces one: fails on the other.
# A few seconds; part of `make unit`. Needs root, as test-labs does.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
repo=$(mktemp -d "$PWD/build/planted-labs.XXXXXX")
trap 'rm -rf "$repo"' EXIT
mkdir -p "$repo/docs/labs"
fence='```'
cat > "$repo/docs/labs/planted-pass.md" <<EOF
<!-- expect figure: rate_pct in 10..20 -->
${fence}sh lab
echo "figure rate_pct=12.5"
mkdir -p artifacts && echo '{"facts": {"factor": 2.1}}' > artifacts/record.json
${fence}

<!-- expect figure: factor >= 1.4 from artifacts/record.json .facts.factor -->
${fence}sh lab
echo "the record is written"
${fence}
EOF
cat > "$repo/docs/labs/planted-figure.md" <<EOF
# A lab whose prose went stale

<!-- expect output: measured -->
<!-- expect figure: rate_pct in 25..35 -->
${fence}sh lab
echo "measured: figure rate_pct=91.0"
${fence}
EOF
cat > "$repo/docs/labs/planted-tmp.md" <<EOF
${fence}sh lab
echo scratch > /tmp/planted-leftover-$$
mkdir /tmp/planted-folder-$$ && touch /tmp/planted-folder-$$/a /tmp/planted-folder-$$/b
${fence}
EOF
cat > "$repo/docs/labs/planted-kept.md" <<EOF
<!-- keeps: artifacts/lab/planted-kept/kept.txt: the record a later lab reads -->
${fence}sh lab
mkdir -p artifacts/lab/planted-kept && echo kept > artifacts/lab/planted-kept/kept.txt
head -c 1000 /dev/zero > artifacts/lab/planted-kept/dump.bin
echo "TMPDIR=\${TMPDIR:-unset}"
${fence}
EOF
cat > "$repo/docs/labs/planted-malformed.md" <<EOF
<!-- expect figure: rate_pct between 25 and 35 -->
${fence}sh lab
echo "figure rate_pct=30"
${fence}
EOF
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=ci -c user.email=ci@localhost commit -qm planted

out=$repo.out
rc=0
TMPDIR=$PWD/build/tmp LAB_ROOT=$repo KEEP_LAB_CLONE=1 ci/test-labs.sh planted-pass planted-figure planted-tmp planted-kept planted-malformed > "$out" 2>&1 || rc=$?
fail() { echo "test-labs-planted: $*" >&2; sed 's/^/  | /' "$out" >&2; rm -f "$out"; exit 1; }
[ "$rc" = 1 ] || fail "test-labs exited $rc, not 1"
want=(
  "test-labs: planted-pass: PASS"
  "figure factor = 2.1 (>= 1.4)"
  "lab planted-figure block 1 (line 5): figure rate_pct = 91.0, not in 25..35 as the lab states"
  "/tmp entry left behind: /tmp/planted-leftover-$$ (8 bytes)"
  "/tmp entry left behind: /tmp/planted-folder-$$ (folder of 2 entries"
  "docs/labs/planted-malformed.md line 1: malformed figure annotation"
  "artifacts/lab entry left behind unannounced: artifacts/lab/planted-kept/dump.bin (1000 bytes"
)
for w in "${want[@]}"; do grep -qF -- "$w" "$out" || fail "the output lacks \"$w\""; done
grep -q "test-labs: planted-\(figure\|tmp\|kept\|malformed\): \(PASS\|pass\)" "$out" && fail "a planted lab passed"
grep -q "left behind unannounced: artifacts/lab/planted-kept/kept.txt" "$out" && fail "an announced file was counted as left behind"
# The blocks ran without the runner's TMPDIR, as a person's shell runs them.
logs=$(sed -n 's/^test-labs: logs kept in //p' "$out")
grep -qx "TMPDIR=unset" "$logs/planted-kept/1.out" || fail "a block saw the runner's TMPDIR: $(cat "$logs/planted-kept/1.out" 2>/dev/null)"
rm -rf "$logs"
[ -e "/tmp/planted-leftover-$$" ] && fail "the planted /tmp file reached the host's /tmp"
rm -f "$out"
echo "test-labs-planted: a stale figure, /tmp leftovers, unannounced artifacts/lab files and a malformed annotation fail, naming what; an in-range figure passes, and blocks run without the runner's TMPDIR"
