# The corpus's two commands: `make run` (the default demo, or one repro) and `make test` (unit tests + gate).
# Both run the idempotent setup first.
SHELL := /bin/bash
.DEFAULT_GOAL := run

REPRO   ?=
SUBJECT ?=
VARIANT ?=
CASE    ?=
KEEP    ?=
RUNS    ?=

CORPUS := dotnet build/harness/corpus/corpus.dll

# Build tools and runtimes leave files in TMPDIR (two empty folders per `dotnet build`, the diagnostic sockets of
# killed CoreCLR runs): in the corpus's own tree, not the host's /tmp. The harness does the same when run directly.
export TMPDIR := $(CURDIR)/build/tmp
$(shell mkdir -p build/tmp)
DEMO_REPRO    := binaryformatter-quadratic
DEMO_SUBJECTS := mono,net10

# With no REPRO, run the workshop demo; with REPRO, that repro on its default subjects unless SUBJECT says otherwise.
SELECT = --repro $(or $(REPRO),$(DEMO_REPRO)) \
         $(if $(SUBJECT),--subject '$(SUBJECT)',$(if $(REPRO),,--subject $(DEMO_SUBJECTS))) \
         $(if $(VARIANT),--variant $(VARIANT)) $(if $(CASE),--case $(CASE)) $(if $(KEEP),--keep) $(if $(RUNS),--runs $(RUNS))

# A misspelt variable (CAS=win32) would silently widen the run, so `make run` takes only its own. GNU make exits 2
# whenever the corpus exits non-zero; the corpus's own code (1: a cell differs, 2: bad input) is in make's "Error N".
RUN_VARS := REPRO SUBJECT VARIANT CASE KEEP RUNS
ifneq ($(filter run,$(or $(MAKECMDGOALS),run)),)
  given_vars := $(foreach d,$(MAKEOVERRIDES),$(if $(findstring =,$d),$(firstword $(subst +, ,$(subst :, ,$(subst =, ,$d))))))
  ifneq ($(filter-out $(RUN_VARS),$(given_vars)),)
    $(error unknown variable $(filter-out $(RUN_VARS),$(given_vars)) for make run; it takes $(RUN_VARS))
  endif
endif

.PHONY: setup run test unit gate validate clean lost-memory new-repro stress test-labs bisect
setup:
	@ci/setup.sh

run: setup
	$(CORPUS) run $(SELECT)

test: setup unit gate

# xUnit for every C# project, then GoogleTest (through CTest) for every repro with a cpp/ folder, natively and,
# for the Win32 tests, under Wine.
unit:
	dotnet test corpus.slnx -c Release -nologo -v q --logger "console;verbosity=minimal"
	@set -e; for dir in repros/*/cpp; do \
	  id=$$(basename $$(dirname $$dir)); out=build/$$id/ctest; \
	  cmake -S $$dir -B $$out -DCMAKE_BUILD_TYPE=Release >/dev/null; \
	  cmake --build $$out -j 2 >/dev/null; \
	  ctest --test-dir $$out --output-on-failure; \
	done
	@# The Win32 tests (a *_win32_test.cpp in cpp/): cross-built with mingw-w64, run under Wine in a throwaway cell.
	@set -e; for dir in repros/*/cpp; do \
	  compgen -G "$$dir/*_win32_test.cpp" >/dev/null || continue; \
	  id=$$(basename $$(dirname $$dir)); harness/wine/ctest.sh $$dir build/$$id/wine-ctest; \
	done
	harness/wine/test-cell.sh
	@# The Pester entry point cannot run here (no PowerShell): tree-sitter's PowerShell grammar checks its syntax,
	@# and must reject a broken script, or the check proves nothing.
	node ci/check-powershell.mjs harness/pester/Corpus.Tests.ps1
	@mkdir -p build && printf 'Describe "broken" {\n    It "x" {\n        $$a = (1 +\n' > build/pester-broken.ps1
	@if node ci/check-powershell.mjs build/pester-broken.ps1 2>/dev/null; then \
	  echo "check-powershell: a broken script passed the check" >&2; exit 1; fi
	@# The harness as a Windows program under Wine: its Job Object selftest, then the windows subject's cells, compared
	@# with the Linux harness's outcomes (docs/wine.md, "The harness as a Windows program").
	@$(MAKE) --no-print-directory build/harness/win-x64/corpus.exe
	$(CORPUS) winsmoke

# Published for win-x64 only when the harness's sources change; its own obj folder, so the Linux build stays incremental.
WIN_HARNESS_SOURCES := $(shell find harness/Corpus.Harness harness/LostMemory -path '*/obj' -prune -o -path '*/bin' -prune -o -type f -print)
build/harness/win-x64/corpus.exe: $(WIN_HARNESS_SOURCES)
	dotnet publish harness/Corpus.Harness -c Release -r win-x64 --self-contained -o build/harness/win-x64 \
	  --artifacts-path build/harness/win-x64-obj -nologo -v q -clp:ErrorsOnly
	@touch $@

gate:
	ci/gate.sh

# Every ```sh lab block of every lab (or of LAB=<id>) in a fresh clone; takes minutes, so not part of `make test`.
test-labs:
	ci/test-labs.sh $(LAB)

# Which subject changed a cell's outcome: make bisect REPRO=id [CASE=c] SUBJECTS=roslyn:4.3.1,roslyn:4.5.0,… (oldest first).
SUBJECTS ?=
bisect: setup
	$(CORPUS) bisect --repro '$(REPRO)' --subjects '$(SUBJECTS)' $(if $(CASE),--case $(CASE)) $(if $(VARIANT),--variant $(VARIANT)) $(if $(KEEP),--keep)

validate: setup
	$(CORPUS) validate

# The lost-memory finder on the whole host: shm and memfd objects per process, mapped or held only by a descriptor.
lost-memory: setup
	dotnet build/harness/LostMemory/LostMemory.dll $(ARGS)

# The gate N times, optionally in two clones at once; prints the false-verdict count. Not part of make test.
N ?= 3
CLONES ?= 1
stress: setup
	ci/stress.sh "$(N)" "$(CLONES)" "$(REPRO)"

# A working skeleton of a new repro: make new-repro ID=my-bug KIND=csharp|cpp|win32 (see docs/adding-a-repro.md).
new-repro:
	@ci/new-repro.sh "$(ID)" "$(KIND)"

clean:
	-$(CORPUS) clean
	rm -rf build artifacts
