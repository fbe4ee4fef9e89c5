#!/usr/bin/env bash
# Idempotent setup: Debian packages, the .NET 8 subject, the harness and the dump-facts tool, the Wine template,
# tree-sitter's PowerShell grammar.
# Quick when everything is already there; safe to run from make run and make test every time.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Each `dotnet build` leaves two empty folders in TMPDIR: keep them in the corpus's tree (as the Makefile does).
export TMPDIR=$PWD/build/tmp
mkdir -p "$TMPDIR"

missing=()
while read -r pkg prefix; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  have=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
  if [[ "$have" != "install ok installed "* ]]; then missing+=("$pkg"); continue; fi
  version=${have#install ok installed }
  if [[ "$version" != "$prefix"* ]]; then
    echo "setup: $pkg is $version, but the corpus was validated with $prefix*" >&2
  fi
done < ci/debian-packages.txt

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  as_root=(); [[ $(id -u) == 0 ]] || as_root=(sudo)
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The net8 subject: a dotnet root assembled from the NuGet runtime pack.
harness/subjects/get-dotnet-runtime.sh "$(cat harness/subjects/net8.version)" .cache/subjects/net8

# A tool is built again only when a file of the harness's projects is newer than its last build, or the SDK changed:
# an up-to-date `dotnet build` still costs 1.5-2 s (four of them 6-7 s on a slow VM), and setup runs on every make run.
sources=(harness/Corpus.Harness harness/LostMemory harness/DumpFacts harness/RoslynRunner harness/Directory.Build.props)
sdk=$(dotnet --version)
build() {  # project, output folder
  local stamp="$2/.setup-stamp"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sdk" &&
        -z $(find "${sources[@]}" \( -name bin -o -name obj \) -prune -o -type f -newer "$stamp" -print -quit) ]]; then
    return
  fi
  dotnet build "$1" -c Release -o "$2" -nologo -v q -clp:ErrorsOnly >/dev/null || {
    echo "setup: building $1 failed" >&2; dotnet build "$1" -c Release -o "$2" -nologo -v q -clp:ErrorsOnly; exit 1; }
  echo "$sdk" > "$stamp"
}
build harness/Corpus.Harness build/harness/corpus
build harness/DumpFacts build/harness/DumpFacts
build harness/LostMemory build/harness/LostMemory
# The compiler runner for roslyn:VERSION subjects; each version is restored on first use into .cache/roslyn/.
build harness/RoslynRunner build/harness/roslyn-runner

# Wine subjects (docs/wine.md): the template prefix and the cross-built GoogleTest, each built once and cached.
harness/wine/template.sh
harness/wine/googletest.sh

# The PowerShell grammar for tree-sitter, for the syntax check of the Pester entry point (ci/check-powershell.mjs).
# Both ship prebuilt linux-x64 binaries; the grammar's node binding is ESM-only.
ts=.cache/tree-sitter ts_want="tree-sitter@0.25.1 tree-sitter-powershell@0.26.4"
if [[ $(cat "$ts/stamp" 2>/dev/null) != "$ts_want" ]]; then
  rm -rf "$ts" && mkdir -p "$ts"
  # shellcheck disable=SC2086  # two package specs
  npm install --prefix "$ts" --no-audit --no-fund --loglevel=error $ts_want >/dev/null
  echo "$ts_want" > "$ts/stamp"
fi

# freelog: the free() recorder preloaded into crash-capture runs (see harness/native/freelog).
if [[ ! build/harness/freelog.so -nt harness/native/freelog/freelog.c ]]; then
  gcc -O2 -g -fPIC -shared -fno-omit-frame-pointer -o build/harness/freelog.so harness/native/freelog/freelog.c -ldl
fi
echo "setup: ready in $(( $(date +%s) - start )) s" >&2
