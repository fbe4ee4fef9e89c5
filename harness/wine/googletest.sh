#!/usr/bin/env bash
# Cross-builds GoogleTest from Debian's sources (/usr/src/googletest) for Windows with the mingw-w64 toolchain,
# once, into .cache/wine/googletest (or $1). Rebuilt when missing or when the googletest or mingw package changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest=${1:-$root/.cache/wine/googletest}
src=/usr/src/googletest
[[ -f $src/CMakeLists.txt ]] || { echo "wine/googletest: no $src (Debian package googletest)" >&2; exit 1; }
version="googletest $(dpkg-query -W -f='${Version}' googletest) g++-mingw-w64-x86-64-posix $(dpkg-query -W -f='${Version}' g++-mingw-w64-x86-64-posix) $(md5sum < "$here/mingw-w64-posix.cmake" | cut -c1-12)"
[[ -f $dest/corpus-version && "$(cat "$dest/corpus-version")" == "$version" ]] && exit 0

start=$(date +%s%N)
echo "wine/googletest: cross-building $src into $dest" >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/corpus-gtest.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake -S "$src" -B "$work/build" -DCMAKE_TOOLCHAIN_FILE="$here/mingw-w64-posix.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$work/install" -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON >"$work/log" 2>&1 \
  && cmake --build "$work/build" -j "$(nproc)" >>"$work/log" 2>&1 \
  && cmake --install "$work/build" >>"$work/log" 2>&1 \
  || { cat "$work/log" >&2; echo "wine/googletest: build failed" >&2; exit 1; }
echo "$version" > "$work/install/corpus-version"
rm -rf "$dest"; mkdir -p "$(dirname "$dest")"; mv "$work/install" "$dest"
echo "wine/googletest: built in $(( ($(date +%s%N) - start) / 1000000 )) ms, $(du -sm "$dest" | cut -f1) MB" >&2
