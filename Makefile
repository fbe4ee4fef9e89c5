# The corpus's two commands: `make run` (the default demo, or one repro) and `make test` (unit tests, gate, the repros'
# Pester tests over the gate's run).
# Both run the idempotent setup first.
SHELL := /bin/bash
.DEFAULT_GOAL := run

REPRO   ?=
SUBJECT ?=
VARIANT ?=
CASE    ?=
KEEP    ?=
RUNS    ?=
ENV     ?=
SHARD   ?=

CORPUS := dotnet build/harness/corpus/corpus.dll
comma := ,

# Build tools and runtimes leave files in TMPDIR (two empty folders per `dotnet build`, the diagnostic sockets of
# killed CoreCLR runs): in the corpus's own tree, not the host's /tmp. The harness does the same when run directly.
export TMPDIR := $(CURDIR)/build/tmp
$(shell mkdir -p build/tmp)
DEMO_REPRO    := binaryformatter-quadratic
DEMO_SUBJECTS := mono,net10

# With no REPRO, run the workshop demo; with REPRO, that repro on its default subjects unless SUBJECT says otherwise.
SELECT = --repro $(or $(REPRO),$(DEMO_REPRO)) \
         $(if $(SUBJECT),--subject '$(SUBJECT)',$(if $(REPRO),,--subject $(DEMO_SUBJECTS))) \
         $(if $(VARIANT),--variant $(VARIANT)) $(if $(CASE),--case $(CASE)) $(if $(KEEP),--keep) $(if $(RUNS),--runs $(RUNS)) \
         $(foreach e,$(ENV),--env '$(e)') $(if $(SHARD),--shard '$(SHARD)')

# A misspelt variable (CAS=win32) would silently widen the run, so `make run` takes only its own. GNU make exits 2
# whenever the corpus exits non-zero; the corpus's own code (1: a cell differs, 2: bad input) is in make's "Error N".
RUN_VARS := REPRO SUBJECT VARIANT CASE KEEP RUNS ENV SHARD
ifneq ($(filter run,$(or $(MAKECMDGOALS),run)),)
  # By origin, not by splitting MAKEOVERRIDES into words: a value with spaces (ENV='A=1 B=2') is one variable.
  given_vars := $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $v)),$v))
  ifneq ($(filter-out $(RUN_VARS),$(given_vars)),)
    $(error unknown variable $(filter-out $(RUN_VARS),$(given_vars)) for make run; it takes $(RUN_VARS))
  endif
endif

.PHONY: setup run test unit publish-windows-harness gate pester validate clean lost-memory new-repro stress test-labs bisect merge durations compare matrix
setup:
	@ci/setup.sh

run: setup
	$(CORPUS) run $(SELECT)

# After the gate, the repros' Pester tests assert the labs' claims over the gate's run (artifacts/latest), running no cell;
# then a copy of the run with one fact planted wrong must fail the It that reads it; then the planted regression
# (net10 → mono on the deserialize sweep) must make `corpus compare` say regressed and exit 1. ci/test.sh times each
# stage and prints the times at the end.
test:
	ci/test.sh

# xUnit, CTest (natively and under Wine), the Wine cell checks, PowerShell's parser over every PowerShell file, the Corpus
# module's Pester tests, and the harness as a Windows program under Wine: ci/unit.sh.
unit: setup
	ci/unit.sh

# The harness published for win-x64, only when its sources changed (make unit does this before `corpus winsmoke`).
publish-windows-harness:
	ci/publish-windows-harness.sh

# SHARD=I/N: the I-th of N shares of the gate's cells (see `make merge`).
gate: setup
	ci/gate.sh $(if $(SHARD),--shard '$(SHARD)')

# One run from the runs of SHARD=1/N … N/N: make merge SHARDS='run-id-or-folder …' [OUT=DIR]; exit codes as for the gate.
SHARDS ?=
OUT ?=
merge: setup
	$(CORPUS) merge $(SHARDS) $(if $(OUT),--out '$(OUT)')

# The seconds of every cell of a run (RUN=<id>|latest) into ci/durations.json, which SHARD= balances by.
durations: setup
	$(CORPUS) durations '$(or $(RUN),latest)'

# The repros' Pester tests (repros/<id>/<id>.Tests.ps1): over a finished run with RUN=<id>|latest, else running their
# cells (artifacts kept); REPRO=<id>[,<id>] for some.
RUN ?=
pester: setup
	ci/pester.sh '$(RUN)' $(subst $(comma), ,$(REPRO))

# Every ```sh lab block of every lab (or of LAB=<id>) in a fresh clone; takes minutes, so not part of `make test`.
test-labs:
	ci/test-labs.sh $(LAB)

# Which subject changed a cell's outcome: make bisect REPRO=id [CASE=c] SUBJECTS=roslyn:4.3.1,roslyn:4.5.0,… (versions of one kind
# are put oldest first), or FROM=RUN: start from a matrix's change.
SUBJECTS ?=
FROM ?=
bisect: setup
	$(CORPUS) bisect --repro '$(REPRO)' --subjects '$(SUBJECTS)' $(if $(CASE),--case $(CASE)) $(if $(VARIANT),--variant $(VARIANT)) $(if $(KEEP),--keep) \
	  $(if $(FROM),--from '$(FROM)') \
	  $(foreach e,$(ENV),--env '$(e)')

# A patch's effect: every selected cell on BASE and NEW, each fixed, regressed, unchanged, changed or inconclusive;
# exit 1 when any regressed. make compare BASE=net8 NEW=coreclr:/my/root [REPRO=…] [CASE=…] [ROUNDS=N] [FROM=RUN: a finished
# run whose cells on both subjects stand for round 1 where they can].
BASE ?=
NEW ?=
ROUNDS ?=
compare: setup
	$(CORPUS) compare --base '$(BASE)' --new '$(NEW)' $(if $(REPRO),--repro '$(REPRO)') $(if $(CASE),--case '$(CASE)') \
	  $(if $(VARIANT),--variant '$(VARIANT)') $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(FROM),--from '$(FROM)') $(if $(KEEP),--keep) \
	  $(foreach e,$(ENV),--env '$(e)')

# Cells × subjects in one run (matrix.md, matrix.json, matrix.png): make matrix SUBJECTS=roslyn:4.8.0,roslyn:4.11.0 [REPRO=id] [CASE=c].
matrix: setup
	$(CORPUS) matrix $(if $(REPRO),--repro '$(REPRO)') $(if $(SUBJECTS),--subjects '$(SUBJECTS)') $(if $(CASE),--case $(CASE)) \
	  $(if $(VARIANT),--variant $(VARIANT)) $(if $(KEEP),--keep) $(foreach e,$(ENV),--env '$(e)')

validate: setup
	$(CORPUS) validate

# The lost-memory finder on the whole host: shm and memfd objects per process, mapped or held only by a descriptor.
lost-memory: setup
	dotnet build/harness/LostMemory/LostMemory.dll $(ARGS)

# The gate N times, optionally in two clones at once and under chaos (LOAD=1: a busy loop per core and a memory hog);
# prints false verdicts, inconclusive cells, errors and retried runs apart. Not part of make test.
N ?= 3
CLONES ?= 1
LOAD ?=
stress: setup
	ci/stress.sh "$(N)" "$(CLONES)" "$(REPRO)" "$(LOAD)"

# A working skeleton of a new repro: make new-repro ID=my-bug KIND=csharp|cpp|win32 [NAME=MyBug] (see docs/adding-a-repro.md).
new-repro:
	@ci/new-repro.sh "$(ID)" "$(KIND)" "$(NAME)"

clean:
	-$(CORPUS) clean
	rm -rf build artifacts
