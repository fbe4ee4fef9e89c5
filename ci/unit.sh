#!/usr/bin/env bash
# make unit: xUnit for every C# project; GoogleTest through CTest for every repro with a cpp/ folder, natively and,
# for the Win32 tests, under Wine; the Wine cell checks; PowerShell's parser over every PowerShell file and the Corpus
# module's Pester tests; the labs runner's planted failures; actionlint over ci/workflows/; the harness as a Windows
# program under Wine. Stops at the first failure with its exit code.
set -euo pipefail
cd "$(dirname "$0")/.."
export TMPDIR=${TMPDIR:-$PWD/build/tmp}
mkdir -p "$TMPDIR"
# Each step's seconds, printed at the end (passed or not): what the unit stage of `make test` spends its time on.
steps=(); mark=$SECONDS
step() { steps+=("$1 $((SECONDS - mark)) s"); mark=$SECONDS; }
trap 'echo "unit: $(printf "%s; " "${steps[@]}")$((SECONDS)) s in all" >&2' EXIT

# The Wine template prefix and the cross-built GoogleTest: the Wine tests below and the harness's own tests use them.
harness/wine/template.sh
flock .cache/wine/googletest.lock harness/wine/googletest.sh .cache/wine/googletest
step wine-template

# The tests and the smoke below work in folders of their own: the user's artifacts/latest must name the same run after.
latest_before=$(readlink artifacts/latest 2>/dev/null || true)
# The log is kept so that, on a failure, the failed tests are printed again last: a CI log is often read from its end.
if ! dotnet test corpus.slnx -c Release -nologo -v q --logger "console;verbosity=minimal" 2>&1 | tee build/unit-dotnet-test.log; then
  ci/failed-tests.sh build/unit-dotnet-test.log; exit 1
fi
# perf stamps records with the kernel's clock, the harness its markers with its own, which a time namespace moves:
# the perf tests again with the harness's clock 1000 s ahead.
unshare --time --monotonic 1000 dotnet test harness/Corpus.Harness.Tests -c Release --no-build -nologo -v q \
  --filter "FullyQualifiedName~NativeTraceTests.Perf" --logger "console;verbosity=minimal"
step xunit

for dir in repros/*/cpp; do
  id=$(basename "$(dirname "$dir")"); out=build/$id/ctest
  cmake -S "$dir" -B "$out" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$out" -j 2 >/dev/null
  ctest --test-dir "$out" --output-on-failure
done
step ctest

# The Win32 tests (a *_win32_test.cpp in cpp/): cross-built with mingw-w64, run under Wine in a throwaway cell.
for dir in repros/*/cpp; do
  compgen -G "$dir/*_win32_test.cpp" >/dev/null || continue
  id=$(basename "$(dirname "$dir")")
  harness/wine/ctest.sh "$dir" "build/$id/wine-ctest"
done
harness/wine/test-cell.sh
step wine-ctest

# Every PowerShell file in the tree through PowerShell's own parser; a broken script must be rejected, or the check
# proves nothing.
mapfile -t scripts < <(find . \( -name .git -o -path ./build -o -path ./.cache -o -path ./artifacts -o -name obj -o -name bin \) \
                        -prune -o -type f \( -name '*.ps1' -o -name '*.psm1' -o -name '*.psd1' \) -print | sort)
ci/pwsh.sh -File ci/check-powershell.ps1 "${scripts[@]}"
printf 'Describe "broken" {\n    It "x" {\n        $a = (1 +\n' > build/pester-broken.ps1
if ci/pwsh.sh -File ci/check-powershell.ps1 build/pester-broken.ps1 2>/dev/null; then
  echo "check-powershell: a broken script passed the check" >&2; exit 1
fi
# The labs' runner must be able to fail: a figure outside its stated range, a /tmp leftover, a malformed annotation.
ci/test-labs-planted.sh
# The GitHub Actions workflows through actionlint (pinned, ci/actionlint/); they are not run here.
ci/lint-workflows.sh
step checks

# The Corpus PowerShell module's own tests (no cell runs): its Should operators, run reading and `corpus list`.
ci/pwsh.sh -Command '$c = New-PesterConfiguration; $c.Run.Path = "harness/pester/Tests"; $c.Run.Exit = $true
                     $c.Output.Verbosity = "Detailed"; Invoke-Pester -Configuration $c'
step module-pester

# The harness as a Windows program under Wine: its Job Object selftest, then the windows subject's cells, compared
# with the Linux harness's outcomes, then the repros' Pester files under PowerShell for Windows over that run (docs/wine.md,
# "The harness as a Windows program").
ci/publish-windows-harness.sh
# PowerShell for Windows on a win-x64 .NET root from NuGet packs, for the smoke's Pester run (assembled once).
harness/wine/pwsh.sh setup
step windows-harness
smoke=build/winsmoke.log
dotnet build/harness/corpus/corpus.dll winsmoke | tee "$smoke"
# A CI reader searching the log for "failed" must find only real failures: the inner Windows harness's own gate
# (which compares with expected/, where windows is unsupported) stays in its .stdout file.
if grep -qE '^gate: .*[1-9][0-9]* failed|MISMATCH' "$smoke"; then
  echo "unit: winsmoke's output holds the inner harness's gate; only the comparison that decides the smoke belongs there" >&2
  exit 1
fi
step winsmoke
latest_after=$(readlink artifacts/latest 2>/dev/null || true)
if [[ $latest_after != "$latest_before" ]]; then
  echo "unit: artifacts/latest was '${latest_before:-none}' and is now '${latest_after:-none}': a test or the smoke wrote into the user's artifacts" >&2
  exit 1
fi
