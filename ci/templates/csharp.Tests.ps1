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
    Context 'C#: the example bug, on Mono and .NET 10' -Skip:$IsWindows {
        BeforeAll {
            $bug = @{}
            $fix = @{}
            foreach ($subject in 'mono', 'net10') {
                $bug[$subject] = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant bug -Subject $subject -Run $Run
                $fix[$subject] = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant fix -Subject $subject -Run $Run
            }
        }

        # REPLACE: these Its assert the skeleton's example bug. Make each one a claim of docs/labs/@ID@.md (one It per
        # claim, at least one per cell of expected/@ID@.json), reading the facts that show it: $cell.Family.facts (the
        # family's facts), $cell.Evidence, $cell.Fixture, Should -HaveFrame (facts.json in docs/output.md).
        # An It that only checks the outcome is not enough; never read the cell's text logs.
        It 'the bug variant dies of the example exception on <Subject>' -ForEach @(@{ Subject = 'mono' }, @{ Subject = 'net10' }) {
            $cell = $bug[$Subject]
            $cell | Should -Reproduce
            # The process family's facts: how the run ended, and the text each output pattern of the signature matched.
            $cell.Family.facts.status | Should -Not -BeIn 'exit 0', 'timeout', 'memory-cap' -Because $cell.Context
            $cell.Family.facts.matched | Should -Contain 'REPRO-REACHED bug' -Because $cell.Context
            $cell.Family.facts.matched | Should -Contain 'ExampleBugException'
        }

        It 'the fix variant finishes on <Subject> and reports its METRIC' -ForEach @(@{ Subject = 'mono' }, @{ Subject = 'net10' }) {
            $cell = $fix[$Subject]
            $cell | Should -BeClean
            $cell.Family.facts.status | Should -Be 'exit 0' -Because $cell.Context
            $cell.Family.facts.matched | Should -Not -Contain 'REPRO-REACHED bug'
            $cell.Family.facts.metrics.seconds | Should -Not -BeNullOrEmpty -Because "the program prints METRIC {`"seconds`": …}$($cell.Context)"
            $cell.Family.facts.metrics.seconds | Should -BeLessThan 10
        }
    }
}
