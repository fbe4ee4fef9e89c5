#!/usr/bin/env bash
# Idempotent setup: Debian packages, the .NET 8 subject, the harness and the dump-facts tool, the Wine template,
# PowerShell and Pester.
# Quick when everything is already there; safe to run from make run and make test every time.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
echo "setup: checking the packages, the net8 subject, the harness's builds and the tools (about 3 s when all is there) …" >&2
# Each `dotnet build` leaves two empty folders in TMPDIR: keep them in the corpus's tree (as the Makefile does).
export TMPDIR=$PWD/build/tmp
mkdir -p "$TMPDIR"

# A step that can run for more than a few seconds (a build, a restore, a download) says so every 4 s while it runs:
# nobody watching setup waits 5 s without a line. The command stays in the foreground (Ctrl-C reaches it); the
# ticker stops with it, or within 0.2 s of this script's end however it ends. The exit status is the command's.
ticking() {  # what, command...
  local what=$1 ticker rc=0; shift
  # Short sleeps, so that a killed ticker leaves no sleep behind for more than 0.2 s.
  # The clock is bash's own SECONDS: on a loaded host 25 sleeps of 0.2 s take far longer than 5 s.
  ( start=$SECONDS next=4
    while sleep 0.2 && kill -0 $$ 2>/dev/null; do
      if ((SECONDS - start >= next)); then echo "setup: … $what, $((SECONDS - start)) s so far" >&2; next=$((SECONDS - start + 4)); fi
    done ) &
  ticker=$!
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  return "$rc"
}

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
  ticking "apt-get update" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  ticking "installing ${#missing[@]} package(s)" \
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's nodejs comes without npm (NodeSource's has it): ci/lint-workflows.sh needs both.
if command -v node >/dev/null && ! command -v npm >/dev/null; then
  as_root=(); [[ $(id -u) == 0 ]] || as_root=(sudo)
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

# The net8 subject: a dotnet root assembled from the NuGet runtime pack.
ticking "assembling the net8 subject" harness/subjects/get-dotnet-runtime.sh "$(cat harness/subjects/net8.version)" .cache/subjects/net8

# A tool is built again only when a file of the harness's projects is newer than its last build, or the SDK changed:
# an up-to-date `dotnet build` still costs 1.5-2 s (four of them 6-7 s on a slow VM), and setup runs on every make run.
sources=(harness/Corpus.Harness harness/LostMemory harness/DumpFacts harness/RoslynRunner harness/subjects/probe harness/Directory.Build.props)
sdk=$(dotnet --version)
build() {  # project, output folder, how long a build usually takes (measured on a fresh clone)
  local stamp="$2/.setup-stamp"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sdk" &&
        -z $(find "${sources[@]}" \( -name bin -o -name obj \) -prune -o -type f -newer "$stamp" -print -quit) ]]; then
    return
  fi
  local t=$(date +%s)
  echo "setup: building $1 (not built yet, or changed since; $3 s on the 2-core VM) …" >&2
  ticking "building $1" dotnet build "$1" -c Release -o "$2" -nologo -v q -clp:ErrorsOnly >/dev/null || {
    echo "setup: building $1 failed" >&2; dotnet build "$1" -c Release -o "$2" -nologo -v q -clp:ErrorsOnly; exit 1; }
  echo "setup: built $1 in $(( $(date +%s) - t )) s" >&2
  echo "$sdk" > "$stamp"
}
build harness/Corpus.Harness build/harness/corpus 15-25
build harness/DumpFacts build/harness/DumpFacts 5-10
build harness/LostMemory build/harness/LostMemory 2-5
# The compiler runner for roslyn:VERSION subjects; each version is restored on first use into .cache/roslyn/.
build harness/RoslynRunner build/harness/roslyn-runner 5-10
# The probe a user's dotnet root must run before its cells do (coreclr:ROOT; a user's Mono runs the same source).
build harness/subjects/probe/Probe.csproj build/harness/probe-net 5-10

# Wine's template prefix and the cross-built GoogleTest (docs/wine.md) are built when first needed: the harness builds
# the template when a selected cell runs on a Wine subject, ci/unit.sh builds both. make run's demo needs neither.

# PowerShell and Pester, both from NuGet and pinned: pwsh and the .NET diagnostics tools (dotnet-dump, -trace,
# -counters, -stack, -gcdump, ilspycmd) as local .NET tools (.config/dotnet-tools.json), Pester restored by
# ci/pester/Pester.csproj and copied where ci/pwsh.sh puts it on PSModulePath. ilspycmd is 11.1: 11.2's native
# host needs glibc 2.38, Debian 12 has 2.36.
ticking "restoring the pinned .NET tools" dotnet tool restore >/dev/null || { echo "setup: dotnet tool restore (.config/dotnet-tools.json) failed" >&2; dotnet tool restore; exit 1; }
pester_version=$(sed -n 's/.*Include="Pester" Version="\[\([^]]*\)\]".*/\1/p' ci/pester/Pester.csproj)
[[ -n $pester_version ]] || { echo "setup: ci/pester/Pester.csproj: no PackageDownload of Pester with a [version]" >&2; exit 1; }
pester=.cache/powershell/Modules/Pester/$pester_version
if [[ ! -f $pester/Pester.psd1 ]]; then
  ticking "restoring Pester $pester_version" dotnet restore ci/pester/Pester.csproj --packages .cache/powershell/packages -nologo -v q >/dev/null || {
    echo "setup: restoring Pester $pester_version failed" >&2; exit 1; }
  rm -rf "$pester" "$pester.tmp" && mkdir -p "$(dirname "$pester")"
  cp -r ".cache/powershell/packages/pester/$pester_version/tools" "$pester.tmp" && mv "$pester.tmp" "$pester"
fi
# Pester stays in the checkout: ci/pwsh.sh puts .cache/powershell/Modules on PowerShell's module path, and nothing goes
# under $HOME.

# freelog: the free() recorder preloaded into crash-capture runs (see harness/native/freelog).
if [[ ! build/harness/freelog.so -nt harness/native/freelog/freelog.c ]]; then
  gcc -O2 -g -fPIC -shared -fno-omit-frame-pointer -o build/harness/freelog.so harness/native/freelog/freelog.c -ldl
fi
# xstate: preloaded into the gdb that records time travel; it completes the register writes gdb 13 makes too short
# for a kernel with a larger XSAVE area (see harness/native/xstate).
if [[ ! build/harness/xstate.so -nt harness/native/xstate/xstate.c ]]; then
  gcc -O2 -g -fPIC -shared -Wall -o build/harness/xstate.so harness/native/xstate/xstate.c -ldl
fi
echo "setup: ready in $(( $(date +%s) - start )) s" >&2
