#!/usr/bin/env bash
# The corpus's PowerShell: the pinned pwsh from .config/dotnet-tools.json, with the pinned Pester (.cache/powershell/
# Modules, restored by ci/setup.sh) and the Corpus module (harness/pester) first on PSModulePath, and no profile;
# it runs in the checkout's root, so paths are relative to it.
#   ci/pwsh.sh -Command "Invoke-Pester repros/filemapping-leak -Output Detailed"
#   ci/pwsh.sh -File script.ps1 ARGS...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export TMPDIR=${TMPDIR:-$root/build/tmp}
mkdir -p "$TMPDIR"
export PSModulePath=$root/.cache/powershell/Modules:$root/harness/pester${PSModulePath:+:$PSModulePath}
# No telemetry ping and no update check on each start; plain text when the output is not a terminal.
export POWERSHELL_TELEMETRY_OPTOUT=1 POWERSHELL_UPDATECHECK=Off
[[ -t 1 ]] || export NO_COLOR=1
# Without a terminal nothing can answer a prompt: fail instead of waiting.
flags=(-NoProfile); [[ -t 0 ]] || flags+=(-NonInteractive)
cd "$root"
exec dotnet tool run pwsh "${flags[@]}" "$@"
