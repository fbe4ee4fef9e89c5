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
DEMO_REPRO    := binaryformatter-quadratic
DEMO_SUBJECTS := mono,net10

# With no REPRO, run the workshop demo; with REPRO, that repro on its default subjects unless SUBJECT says otherwise.
SELECT = --repro $(or $(REPRO),$(DEMO_REPRO)) \
         $(if $(SUBJECT),--subject '$(SUBJECT)',$(if $(REPRO),,--subject $(DEMO_SUBJECTS))) \
         $(if $(VARIANT),--variant $(VARIANT)) $(if $(CASE),--case $(CASE)) $(if $(KEEP),--keep) $(if $(RUNS),--runs $(RUNS))

.PHONY: setup run test unit gate validate clean lost-memory test-labs
setup:
	@ci/setup.sh

run: setup
	$(CORPUS) run $(SELECT)

test: setup unit gate

# xUnit for every C# project, then GoogleTest (through CTest) for every repro with a cpp/ folder.
unit:
	dotnet test corpus.slnx -c Release -nologo -v q --logger "console;verbosity=minimal"
	@set -e; for dir in repros/*/cpp; do \
	  id=$$(basename $$(dirname $$dir)); out=build/$$id/ctest; \
	  cmake -S $$dir -B $$out -DCMAKE_BUILD_TYPE=Release >/dev/null; \
	  cmake --build $$out -j 2 >/dev/null; \
	  ctest --test-dir $$out --output-on-failure; \
	done

gate:
	ci/gate.sh

# Every ```sh lab block of every lab (or of LAB=<id>) in a fresh clone; takes minutes, so not part of `make test`.
test-labs:
	ci/test-labs.sh $(LAB)

validate: setup
	$(CORPUS) validate

# The lost-memory finder on the whole host: shm and memfd objects per process, mapped or held only by a descriptor.
lost-memory: setup
	dotnet build/harness/LostMemory/LostMemory.dll $(ARGS)

clean:
	-$(CORPUS) clean
	rm -rf build artifacts
