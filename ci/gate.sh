#!/usr/bin/env bash
# The gate: every repro, every default subject, every case (slow ones too), against expected/.
# Exit 0 only when every outcome matches. JUnit XML: artifacts/latest/junit.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
exec dotnet build/harness/corpus/corpus.dll run --run-id "gate-$(date -u +%Y%m%d-%H%M%S)-$$" "$@"
