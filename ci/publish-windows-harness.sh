#!/usr/bin/env bash
# The harness published for win-x64 (build/harness/win-x64/corpus.exe), for `corpus winsmoke` under Wine. Published
# again only when a file of its sources is newer than the last publish; its own obj folder, so the Linux build stays
# incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
export TMPDIR=${TMPDIR:-$PWD/build/tmp}
mkdir -p "$TMPDIR"
out=build/harness/win-x64 exe=build/harness/win-x64/corpus.exe
if [[ -f $exe && -z $(find harness/Corpus.Harness harness/LostMemory \( -name bin -o -name obj \) -prune \
                        -o -type f -newer "$exe" -print -quit) ]]; then
  exit 0
fi
dotnet publish harness/Corpus.Harness -c Release -r win-x64 --self-contained -o "$out" \
  --artifacts-path build/harness/win-x64-obj -nologo -v q -clp:ErrorsOnly
touch "$exe"
