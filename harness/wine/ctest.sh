#!/usr/bin/env bash
# Cross-builds one repro's cpp/ folder for Windows and runs its GoogleTest tests under Wine through CTest,
# in a throwaway Wine cell (harness/wine/cell.sh) that is torn down whatever happens.
#   ctest.sh <repro-cpp-dir> <build-dir>
# The cell's wineserver and its first program start before ctest, away from its pipes: when wineserver first
# starts inside ctest, Wine's background processes inherit ctest's output pipe and ctest waits for them forever.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=${1:?usage: ctest.sh <repro-cpp-dir> <build-dir>} out=${2:?usage: ctest.sh <repro-cpp-dir> <build-dir>}
gtest=$root/.cache/wine/googletest
[[ -f $gtest/corpus-version ]] || { echo "wine/ctest: no cross-built GoogleTest in $gtest (run ci/setup.sh)" >&2; exit 1; }

cmake -S "$src" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$here/mingw-w64-posix.cmake" -DCMAKE_PREFIX_PATH="$gtest" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$out" -j 2 >/dev/null

cell=$out/wine-cell
trap '"$here/cell.sh" down "$cell"' EXIT INT TERM
# A display for tests that make windows; Xvfb adds about 0.1 s.
"$here/cell.sh" up "$cell" --display >/dev/null
env_args=(); while IFS= read -r line; do env_args+=("$line"); done < "$cell/env"
env "${env_args[@]}" ctest --test-dir "$out" --output-on-failure </dev/null
