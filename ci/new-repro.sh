#!/usr/bin/env bash
# make new-repro ID=<id> KIND=csharp|cpp|win32 [NAME=PascalName]: a working skeleton of a repro, ready for make validate
# and make run. Writes repros/<id>/ (with its Pester file, <id>.Tests.ps1), expected/<id>.json, a lab stub
# docs/labs/<id>.md that make test-labs runs, and, for C#, the solution entry. Refuses to overwrite anything.
set -euo pipefail
cd "$(dirname "$0")/.."
id=${1:-}; kind=${2:-}; name=${3:-}
usage() { echo "usage: make new-repro ID=<lowercase-words-with-dashes> KIND=csharp|cpp|win32 [NAME=PascalCaseName]" >&2; exit 2; }
[[ -n "$id" && -n "$kind" ]] || usage
[[ "$id" =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] || { echo "new-repro: ID '$id' must be lowercase words joined by dashes" >&2; exit 2; }
case "$kind" in csharp|cpp|win32) ;; *) echo "new-repro: KIND '$kind' is not one of csharp, cpp, win32" >&2; exit 2;; esac
dir=repros/$id
for f in "$dir" "expected/$id.json" "docs/labs/$id.md"; do
  [[ -e "$f" ]] && { echo "new-repro: $f exists; choose another ID or remove it" >&2; exit 2; }
done
# PascalCase for the C# names (the ID's words capitalised, or NAME where the ID runs words together:
# binaryformatter-linkedlist would be BinaryformatterLinkedlist), snake_case for the native target.
if [[ -n "$name" ]]; then
  [[ "$name" =~ ^[A-Z][A-Za-z0-9]*$ ]] || { echo "new-repro: NAME '$name' must be a PascalCase C# name (letters and digits, a capital first)" >&2; exit 2; }
  pascal=$name
else
  pascal=$(sed -E 's/(^|-)([a-z])/\U\2/g' <<<"$id")
fi
snake=${id//-/_}
render() {  # template, destination
  mkdir -p "$(dirname "$2")"
  sed -e "s/@ID@/$id/g" -e "s/@PASCAL@/$pascal/g" -e "s/@SNAKE@/$snake/g" "ci/templates/$1" > "$2"
}
case "$kind" in
  csharp)
    render csharp.repro.json "$dir/repro.json"
    render csharp.expected.json "expected/$id.json"
    render csharp.csproj "$dir/src/$pascal.csproj"
    render csharp.Program.cs "$dir/src/Program.cs"
    # The solution lists every C# project, so dotnet test corpus.slnx builds it.
    python3 - "$dir/src/$pascal.csproj" <<'PY'
import sys
path = sys.argv[1]
s = open("corpus.slnx").read()
marker = '  <Folder Name="/repros/">\n'
line = f'    <Project Path="{path}" />\n'
if line not in s:
    s = s.replace(marker, marker + line)
open("corpus.slnx", "w").write(s)
PY
    ;;
  cpp)
    render cpp.repro.json "$dir/repro.json"
    render cpp.expected.json "expected/$id.json"
    render cpp.CMakeLists.txt "$dir/cpp/CMakeLists.txt"
    render cpp.core.h "$dir/cpp/$snake.h"
    render cpp.main.cpp "$dir/cpp/$snake.cpp"
    render cpp.test.cpp "$dir/cpp/${snake}_test.cpp"
    ;;
  win32)
    render win32.repro.json "$dir/repro.json"
    render win32.expected.json "expected/$id.json"
    render win32.CMakeLists.txt "$dir/cpp/CMakeLists.txt"
    render win32.main.cpp "$dir/cpp/${snake}_win32.cpp"
    ;;
esac
# The Pester file every repro has: one It per claim, over the facts of the kind's cells (ci/templates/<kind>.Tests.ps1).
render "$kind.Tests.ps1" "$dir/$id.Tests.ps1"
# The lab the sources point at: a stub whose one block make test-labs runs (LAB=<id>).
render lab.md "docs/labs/$id.md"
[[ "$kind" == csharp ]] && echo "new-repro: C# names: $pascal (NAME=… chooses another)"
echo "new-repro: wrote $dir, expected/$id.json and docs/labs/$id.md; next: make validate && make run REPRO=$id"
echo "new-repro: then replace the example bug, the signature, the reasons and the Its of $dir/$id.Tests.ps1; see docs/adding-a-repro.md"
