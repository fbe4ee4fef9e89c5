#!/usr/bin/env bash
# Builds the Wine template prefix once into .cache/wine/template (or $1), for harness/wine/cell.sh to copy.
# Rebuilt only when it is missing, incomplete, or made by another Wine version or another version of this
# script (its code, not its comments). The Windows version variants (win7 is Wine's default, win10 through
# winecfg) differ only in the registry, so the template keeps one tree and one set of *.reg files per variant
# under .corpus/<variant>/.
# Everything private: WINEPREFIX, HOME, TMPDIR (so the wineserver socket dir too); no wineserver is left behind.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
template=${1:-$root/.cache/wine/template}
variants=(win7 win10)

command -v wine >/dev/null || { echo "wine/template: wine is not installed (ci/debian-packages.txt)" >&2; exit 1; }
version="$(wine --version 2>/dev/null) $(dpkg-query -W -f='${Version}' wine64 2>/dev/null || true) $(grep -v '^ *#' "$0" | md5sum | cut -c1-12)"
stamp=$template/.corpus/version
if [[ -f $stamp && "$(cat "$stamp")" == "$version" ]]; then exit 0; fi
# One build at a time (the harness builds it when a cell first needs Wine, setup and tests may too): the second
# waits, then finds it current.
mkdir -p "${template%/*}"
exec 9>"${template%/*}/.template.lock"
flock 9
if [[ -f $stamp && "$(cat "$stamp")" == "$version" ]]; then exit 0; fi

start=$(date +%s%N)
echo "wine/template: building $template for $version" >&2
work=$(mktemp -d "${template%/*}/.template-build.XXXXXX" 2>/dev/null || { mkdir -p "${template%/*}"; mktemp -d "${template%/*}/.template-build.XXXXXX"; })
prefix=$work/prefix
export WINEPREFIX=$prefix HOME=$work/home TMPDIR=$work/tmp WINEDEBUG=-all WINEARCH=win64
# No Mono or Gecko installers (they are not packaged here and would ask for a download).
export WINEDLLOVERRIDES="mscoree=d;mshtml=d"
mkdir -p "$HOME" "$TMPDIR"
stop_server() { wineserver -k 2>/dev/null || true; wineserver -w 2>/dev/null || true; }
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT

wineboot -i </dev/null >/dev/null 2>&1
wineserver -w  # wineboot leaves setup work running in the background; the registry is written at exit
for v in "${variants[@]}"; do
  if [[ $v != win7 ]]; then
    wine winecfg /v "$v" </dev/null >/dev/null 2>&1
    wineserver -w
  fi
  mkdir -p "$prefix/.corpus/$v"
  cp -p "$prefix"/*.reg "$prefix/.corpus/$v/"
done
grep -q '"ProductName"="Microsoft Windows 10"' "$prefix/.corpus/win10/system.reg" \
  || { echo "wine/template: winecfg /v win10 did not take (no Windows 10 in system.reg)" >&2; exit 1; }
# The default registry of the tree is win7; the cell script copies the variant it is asked for.
cp -p "$prefix/.corpus/win7/"*.reg "$prefix/"
# Drop the links into the private build HOME (Desktop, Documents, ...): a cell must not see another's files.
find "$prefix/drive_c/users" -maxdepth 3 -type l -lname "$HOME*" -exec sh -c 'for l; do rm "$l"; mkdir "$l"; done' _ {} +
stop_server
# Debian's wineserver records its socket dir ($TMPDIR/wine-XXXXXX) in $WINEPREFIX/wineserver: a cell starts without one.
rm -f "$prefix/wineserver"
echo "$version" > "$prefix/.corpus/version"
rm -rf "$template"
mv "$prefix" "$template"
echo "wine/template: built in $(( ($(date +%s%N) - start) / 1000000 )) ms, $(du -sm "$template" | cut -f1) MB" >&2
