#!/usr/bin/env bash
# PowerShell for Windows (the same pinned `PowerShell` tool as .config/dotnet-tools.json, its win/ build) under Wine,
# on a Windows .NET root assembled from NuGet packs.
#   pwsh.sh setup             assemble .cache/wine/pwsh once (idempotent; a stamp holds the versions)
#   pwsh.sh run PWSH-ARGS...  run pwsh.exe in a private Wine cell (cell.sh) under a pseudo-terminal; exits with
#                             pwsh's exit code. Runs in the checkout's root, so relative paths work.
# Under Wine 8 pwsh writes nothing and exits 0 whatever the script did when its stdout/stderr are pipes or files
# (ConsoleHost; -Version dies with a NullReferenceException there); on a pty it works and its exit code propagates.
# So results go to files (Pester's JUnit XML), and the exit code is the verdict.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/harness/wine
export TMPDIR=${TMPDIR:-$root/build/tmp}
mkdir -p "$TMPDIR"

# The pins, in one place. The runtime is the one the Windows harness is published with (ci/publish-windows-harness.sh).
runtime=10.0.12
# pwsh.runtimeconfig.json asks for Microsoft.WindowsDesktop.App as well as Microsoft.NETCore.App: without that
# framework the host refuses to start pwsh.dll, so its pack is part of the root (its WPF/WinForms files unused here).
packs=(Microsoft.NETCore.App.Runtime.win-x64 Microsoft.WindowsDesktop.App.Runtime.win-x64 Microsoft.NETCore.App.Host.win-x64)
pwsh_version=$(sed -n '/"powershell"/,/}/s/.*"version": *"\([^"]*\)".*/\1/p' "$root/.config/dotnet-tools.json")
[[ -n $pwsh_version ]] || { echo "wine/pwsh: .config/dotnet-tools.json pins no powershell version" >&2; exit 1; }
dest=$root/.cache/wine/pwsh
stamp_text="runtime=$runtime pwsh=$pwsh_version script=$(sha256sum "$0" | cut -c1-16)"

die() { echo "wine/pwsh: $*" >&2; exit 1; }

setup() {
  [[ -f $dest/.stamp && $(<"$dest/.stamp") == "$stamp_text" ]] && return 0
  local t=$SECONDS
  work=$(mktemp -d) stage=$dest.staging.$$
  trap 'rm -rf "$work" "$stage"' EXIT
  {
    echo '<Project Sdk="Microsoft.NET.Sdk">'
    echo '  <PropertyGroup><TargetFramework>net$(BundledNETCoreAppTargetFrameworkVersion)</TargetFramework></PropertyGroup>'
    echo '  <ItemGroup>'
    for p in "${packs[@]}"; do echo "    <PackageDownload Include=\"$p\" Version=\"[$runtime]\" />"; done
    # The tool's package too: the same package `dotnet tool restore` fetches for Linux, of which this uses win/.
    echo "    <PackageDownload Include=\"PowerShell\" Version=\"[$pwsh_version]\" />"
    echo '  </ItemGroup>'
    echo '</Project>'
  } > "$work/dl.csproj"
  dotnet restore "$work/dl.csproj" --nologo -v q >"$work/restore.log" 2>&1 || { cat "$work/restore.log" >&2; die "restoring the win-x64 packs $runtime and PowerShell $pwsh_version failed"; }
  local nuget; nuget=$(dotnet nuget locals global-packages --list | sed -n 's/^global-packages: //p'); nuget=${nuget%/}
  local fx=$nuget/microsoft.netcore.app.runtime.win-x64/$runtime/runtimes/win-x64
  local wd=$nuget/microsoft.windowsdesktop.app.runtime.win-x64/$runtime/runtimes/win-x64
  local host=$nuget/microsoft.netcore.app.host.win-x64/$runtime/runtimes/win-x64/native/apphost.exe
  local tool=$nuget/powershell/$pwsh_version/tools/net10.0/any/win
  [[ -f $tool/pwsh.dll ]] || die "no $tool/pwsh.dll (the PowerShell $pwsh_version tool package)"
  [[ -f $host ]] || die "no $host"

  rm -rf "$stage"
  # A dotnet root as an installer lays it out: hostfxr under host/fxr, each framework under shared/.
  mkdir -p "$stage/root/host/fxr/$runtime" "$stage/root/shared/Microsoft.NETCore.App/$runtime" \
           "$stage/root/shared/Microsoft.WindowsDesktop.App/$runtime"
  cp "$fx/native/hostfxr.dll" "$stage/root/host/fxr/$runtime/"
  cp -r "$fx/lib/net10.0/." "$stage/root/shared/Microsoft.NETCore.App/$runtime/"
  find "$fx/native" -maxdepth 1 -type f ! -name hostfxr.dll -exec cp -t "$stage/root/shared/Microsoft.NETCore.App/$runtime/" {} +
  cp -r "$wd/lib/net10.0/." "$wd/native/." "$stage/root/shared/Microsoft.WindowsDesktop.App/$runtime/"
  chmod -R u+rwX,go+rX "$stage/root"

  # pwsh.exe: the apphost with pwsh.dll written over its placeholder (the SHA-256 of "foobar", 64 bytes, which the
  # SDK's HostWriter replaces with the app's path, zero-padded), as `dotnet publish` makes an app's .exe.
  cp -r "$tool" "$stage/app"
  # Get-CimInstance under Wine 8 fails its type initializer (no WMI Management Infrastructure) and then never
  # returns; Pester's XML reports call it (Get-RunTimeEnvironment). Without CimCmdlets, Pester falls back to "Unknown"
  # and a script that calls it fails at once instead of hanging.
  rm -r "$stage/app/Modules/CimCmdlets"
  local placeholder=c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2
  local offset; offset=$(grep -obaF "$placeholder" "$host" | cut -d: -f1)
  [[ $offset =~ ^[0-9]+$ ]] || die "$host: the app-path placeholder is not there exactly once"
  cp "$host" "$stage/app/pwsh.exe"
  { printf 'pwsh.dll'; head -c $((64 - 8)) /dev/zero; } | dd of="$stage/app/pwsh.exe" bs=1 seek="$offset" conv=notrunc status=none
  grep -qaF "$placeholder" "$stage/app/pwsh.exe" && die "pwsh.exe still holds the placeholder"

  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest"
  mv "$stage" "$dest"
  echo "$stamp_text" > "$dest/.stamp"
  rm -rf "$work"; trap - EXIT
  echo "wine/pwsh: PowerShell $pwsh_version for Windows on .NET $runtime (NETCore + WindowsDesktop) in $dest ($((SECONDS - t)) s)" >&2
}

# Wine maps / to Z:.
winpath() { printf 'Z:%s' "${1//\//\\}"; }

run() {
  setup
  "$here/template.sh"
  # A private cell: its own prefix (a hard-linked copy of the template), tmpfs TMPDIR and wineserver; down kills every
  # process that carries its WINEPREFIX and removes it all, on any exit.
  # Inside a harness's Wine isolation (CORPUS_WINE_CELL, as harness/wine/run.sh uses it) the cell goes there, so the
  # harness's teardown and its supervisor take it down even after a SIGKILL; otherwise a folder of our own.
  # Global: the EXIT trap reads it after run returns.
  # There, marked with this shell's start time, as run.sh marks a live run.
  if [[ -n ${CORPUS_WINE_CELL:-} ]]; then cell=$CORPUS_WINE_CELL/run-$$; mkdir -p "$cell"; "$here/cell.sh" mark "$cell" $$
  else cell=$(mktemp -d "$TMPDIR/wine-pwsh.XXXXXX"); fi
  trap '"$here/cell.sh" down "$cell" >/dev/null 2>&1; rm -rf "$cell"' EXIT
  trap 'exit 143' TERM INT
  "$here/cell.sh" up "$cell" >/dev/null
  local k v
  while IFS='=' read -r k v; do [[ -n $k ]] && export "$k=$v"; done < "$cell/env"
  export DOTNET_ROOT=$(winpath "$dest/root") DOTNET_MULTILEVEL_LOOKUP=0
  # With .NET's W^X double mapping of JIT code on (the default), pwsh under Wine 8 dies at its first finalizer run:
  # "Internal CLR error (0x80131506)" in DynamicResolver+DestroyScout.Finalize, exit 2 (2 of 2 runs).
  export DOTNET_EnableWriteXorExecute=0
  export POWERSHELL_TELEMETRY_OPTOUT=1 POWERSHELL_UPDATECHECK=Off DOTNET_CLI_TELEMETRY_OPTOUT=1 NO_COLOR=1
  # The pinned Pester and the Corpus module first, as ci/pwsh.sh does on Linux.
  export PSModulePath="$(winpath "$root/.cache/powershell/Modules");$(winpath "$root/harness/pester")"
  # A wide terminal, so a line is not wrapped at 80 columns into the log.
  local cmd; cmd="stty cols 500 rows 50; exec $(printf '%q ' "${WINE:-wine}" "$dest/app/pwsh.exe" -NoProfile -NonInteractive "$@")"
  cd "$root"
  # script(1) gives pwsh a pty and returns its exit code (-e); stdin stays /dev/null, so nothing waits on a terminal.
  local rc=0
  SHELL=/bin/bash script -qefc "$cmd" /dev/null </dev/null || rc=$?
  return "$rc"
}

case ${1-} in
  setup) setup ;;
  run) shift; run "$@" ;;
  *) sed -n '4,6p' "$0" | sed 's/^# *//' >&2; exit 2 ;;
esac
