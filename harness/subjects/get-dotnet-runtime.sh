#!/usr/bin/env bash
# Assemble a self-contained "dotnet root" holding exactly one Microsoft.NETCore.App
# version, taken from the NuGet runtime pack microsoft.netcore.app.runtime.linux-x64.
#
#   get-dotnet-runtime.sh VERSION DEST
#
# Result (a standard layout the muxer and hostfxr understand):
#   DEST/dotnet                                   copy of the installed muxer
#   DEST/host/fxr/<fxr-ver>/libhostfxr.so         newest installed hostfxr
#   DEST/shared/Microsoft.NETCore.App/VERSION/    runtime pack's managed + native files, incl.
#                                                 its Microsoft.NETCore.App.deps.json
#   DEST/.subject-complete                        marker (holds VERSION), written last
#
# Environment:
#   HOST_DOTNET_ROOT  dotnet root that supplies muxer, hostfxr and the SDK used to
#                     download the pack (default: root of the `dotnet` on PATH)
#
# The pack is fetched by `dotnet restore` of a throwaway project with a PackageDownload
# item rather than by curl: NuGet verifies the package signature and hash, extracts
# atomically into the global packages folder (so a second run is offline), and honours
# NuGet.Config sources/proxies and retries. The flat container offers no checksum, so a
# plain curl+unzip could not detect a truncated or tampered download.
set -euo pipefail

die() { echo "get-dotnet-runtime: $*" >&2; exit 1; }

[[ $# -eq 2 ]] || { echo "usage: $0 VERSION DEST" >&2; exit 2; }
VERSION=$1
DEST=$(realpath -m "$2")   # absolute: the muxer reports absolute paths
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "bad version '$VERSION'"

MARKER=$DEST/.subject-complete
OWNER=$DEST/.get-dotnet-runtime   # says "this directory is ours, may be replaced"

if [[ -f $MARKER ]]; then
  have=$(<"$MARKER")
  [[ $have == "$VERSION" ]] && exit 0
  die "$DEST already holds runtime $have (wanted $VERSION); use another DEST"
fi
if [[ -d $DEST && -n $(ls -A "$DEST") && ! -f $OWNER ]]; then
  die "$DEST exists, is not empty and was not made by this script; refusing to replace it"
fi

HOST_DOTNET_ROOT=${HOST_DOTNET_ROOT:-$(dirname "$(readlink -f "$(command -v dotnet)")")}
[[ -x $HOST_DOTNET_ROOT/dotnet ]] || die "no dotnet muxer in $HOST_DOTNET_ROOT"
fxr_ver=$(ls "$HOST_DOTNET_ROOT/host/fxr" | sort -V | tail -n1)
[[ -f $HOST_DOTNET_ROOT/host/fxr/$fxr_ver/libhostfxr.so ]] || die "no hostfxr in $HOST_DOTNET_ROOT/host/fxr"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- 1. download the runtime pack into the NuGet global packages folder -------------
# BundledNETCoreAppTargetFrameworkVersion comes from the SDK itself, so the throwaway
# project always targets a TFM the running SDK knows without downloading anything else.
cat >"$work/dl.csproj" <<EOF
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net\$(BundledNETCoreAppTargetFrameworkVersion)</TargetFramework>
  </PropertyGroup>
  <ItemGroup>
    <PackageDownload Include="Microsoft.NETCore.App.Runtime.linux-x64" Version="[$VERSION]" />
  </ItemGroup>
</Project>
EOF
if ! "$HOST_DOTNET_ROOT/dotnet" restore "$work/dl.csproj" --nologo -v q >"$work/restore.log" 2>&1; then
  cat "$work/restore.log" >&2
  die "could not restore Microsoft.NETCore.App.Runtime.linux-x64 $VERSION"
fi
pkgroot=$("$HOST_DOTNET_ROOT/dotnet" nuget locals global-packages --list | sed -n 's/^global-packages: //p')
pack=${pkgroot%/}/microsoft.netcore.app.runtime.linux-x64/${VERSION,,}
# netX.Y from .NET 5 on; netcoreappX.Y before.
managed=$pack/runtimes/linux-x64/lib/net$(cut -d. -f1-2 <<<"$VERSION")
[[ -d $managed ]] || managed=$pack/runtimes/linux-x64/lib/netcoreapp$(cut -d. -f1-2 <<<"$VERSION")
native=$pack/runtimes/linux-x64/native
[[ -d $managed ]] || die "no managed assemblies under $pack/runtimes/linux-x64/lib"
# From .NET 5 on the pack carries the framework's own Microsoft.NETCore.App.deps.json and .runtimeconfig.json next
# to the managed assemblies, identical to what an installed shared framework has. A .NET Core 3.x pack has neither:
# hostpolicy then takes every assembly in the framework's folder, and the smoke test below still has to pass.
has_deps=1
[[ -f $managed/Microsoft.NETCore.App.deps.json ]] || has_deps=0
(( has_deps || ${VERSION%%.*} < 5 )) || die "no Microsoft.NETCore.App.deps.json in $managed"

# --- 2. assemble in a staging directory, then swap it in ---------------------------
stage=$DEST.staging.$$
rm -rf "$stage"
trap 'rm -rf "$work" "$stage"' EXIT
fw=$stage/shared/Microsoft.NETCore.App/$VERSION
mkdir -p "$fw" "$stage/host/fxr/$fxr_ver"
touch "$stage/.get-dotnet-runtime"

# A copy, not a symlink: the muxer derives its root from its own resolved path.
cp "$HOST_DOTNET_ROOT/dotnet" "$stage/dotnet"
# hostfxr only resolves frameworks and loads that framework's own hostpolicy, so the
# newest one serves older runtimes (the same arrangement as 8 and 10 installed side by side).
cp "$HOST_DOTNET_ROOT/host/fxr/$fxr_ver/libhostfxr.so" "$stage/host/fxr/$fxr_ver/"
install -m 0644 "$pack/LICENSE.TXT" "$pack/THIRD-PARTY-NOTICES.TXT" "$stage/"

cp "$managed"/* "$fw/"
# libhostfxr.so in the pack is for apphost-style layouts; a shared framework dir has none.
for f in "$native"/*; do
  [[ $(basename "$f") == libhostfxr.so ]] || cp "$f" "$fw/"
done
# NuGet extracts with its own modes (rwxr--r--); normalise like an installed runtime.
chmod 0644 "$fw"/*
chmod 0755 "$fw"/*.so "$fw/createdump" "$stage/dotnet"
install -m 0644 "$pack/Microsoft.NETCore.App.versions.txt" "$fw/.version"

# Every asset the deps.json names must be present, or the host fails at startup. Asset
# names sit at a fixed depth (10 spaces) in this SDK-generated file.
# A 3.x pack: today's hostfxr lists only framework folders with a <name>.deps.json, so write the one an installed 3.x
# runtime has in substance: every managed assembly and native library of the folder as the runtime pack's assets.
if ((!has_deps)); then
  tfm=$(cut -d. -f1-2 <<<"$VERSION")
  {
    printf '{\n  "runtimeTarget": { "name": ".NETCoreApp,Version=v%s/linux-x64", "signature": "" },\n' "$tfm"
    printf '  "compilationOptions": {},\n  "targets": {\n    ".NETCoreApp,Version=v%s": {},\n' "$tfm"
    printf '    ".NETCoreApp,Version=v%s/linux-x64": {\n      "runtimepack.Microsoft.NETCore.App.Runtime.linux-x64/%s": {\n' "$tfm" "$VERSION"
    printf '        "runtime": {\n'
    (cd "$fw" && ls -1 *.dll) | sed 's/.*/          "&": {}/' | paste -sd, - | sed 's/,/,\n/g'
    printf '        },\n        "native": {\n'
    (cd "$fw" && ls -1 | grep -vE '\.(dll|a|md|txt)$' | grep -v '^\.') | sed 's/.*/          "&": {}/' | paste -sd, - | sed 's/,/,\n/g'
    printf '        }\n      }\n    }\n  },\n  "libraries": {\n'
    printf '    "runtimepack.Microsoft.NETCore.App.Runtime.linux-x64/%s": { "type": "runtimepack", "serviceable": false, "sha512": "" }\n  }\n}\n' "$VERSION"
  } > "$fw/Microsoft.NETCore.App.deps.json"
fi
if ((has_deps)); then
  assets=$(grep -oE '^ {10}"[^"]+": \{' "$fw/Microsoft.NETCore.App.deps.json" | cut -d'"' -f2)
  [[ $(wc -l <<<"$assets") -gt 100 ]] || die "unexpected deps.json layout in $managed"
  missing=$(while read -r name; do [[ -e $fw/$name ]] || echo "$name"; done <<<"$assets")
  [[ -z $missing ]] || die "deps.json names files the pack lacks: $missing"
fi

# --- 3. smoke test the muxer from the staged root, then publish --------------------
listed=$(DOTNET_ROOT=$stage DOTNET_MULTILEVEL_LOOKUP=0 "$stage/dotnet" --list-runtimes)
grep -qxF "Microsoft.NETCore.App $VERSION [$stage/shared/Microsoft.NETCore.App]" <<<"$listed" \
  || die "staged root does not list its runtime: $listed"

rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$stage" "$DEST"
echo "$VERSION" >"$MARKER"
echo "get-dotnet-runtime: Microsoft.NETCore.App $VERSION ready in $DEST (hostfxr $fxr_ver)" >&2
