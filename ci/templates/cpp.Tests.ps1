#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/@ID@.md, one It each, asserted over the facts of the harness's cells.

.DESCRIPTION
    Runs the cells through `corpus run` (artifacts kept under artifacts/pester-*/), or, with -Data @{ Run = '<run>' },
    reads them from a finished run (a run id, artifacts/<id>, or `latest`) without running anything: `make test`
    asserts this way over the gate's run. Written by `make new-repro` for the skeleton's example bug.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/@ID@ -Output Detailed"

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester -Container (New-PesterContainer -Path repros/@ID@ -Data @{ Run = 'latest' })"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe '@ID@' -Tag 'Scenario' {
    # The Linux harness's cells (Linux subjects). A context over the `windows` subject's cells takes -Skip:(-not $IsWindows).
    Context 'C++: the example bug, on Linux' -Skip:$IsWindows {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant bug -Subject linux -Run $Run
            $fix = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant fix -Subject linux -Run $Run
        }

        # REPLACE: these Its assert the skeleton's example bug. Make each one a claim of docs/labs/@ID@.md (one It per
        # claim, at least one per cell of expected/@ID@.json), reading the facts that show it: $bug.Family.facts (the
        # family's facts), $bug.Evidence, $bug.Fixture, Should -HaveFrame (facts.json in docs/output.md).
        # An It that only checks the outcome is not enough; never read the cell's text logs.
        It 'the bug variant releases once too often and aborts with its message' {
            $bug | Should -Reproduce
            # The process family's facts: how the run ended, and the text each output pattern of the signature matched.
            $bug.Family.facts.status | Should -Be 'SIGABRT' -Because $bug.Context
            $bug.Family.facts.matched | Should -Contain 'REPRO-REACHED bug' -Because $bug.Context
            $bug.Family.facts.matched | Should -Contain 'example bug: count went negative'
        }

        It 'the fix variant finishes with nothing left over' {
            $fix | Should -BeClean
            $fix.Family.facts.status | Should -Be 'exit 0' -Because $fix.Context
            $fix.Family.facts.matched | Should -Not -Contain 'REPRO-REACHED bug'
            # The program's METRIC line.
            $fix.Family.facts.metrics.left | Should -Not -BeNullOrEmpty -Because "the program prints METRIC {`"left`": …}$($fix.Context)"
            $fix.Family.facts.metrics.left | Should -Be 0
        }
    }
}
