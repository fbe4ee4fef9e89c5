#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/suppressfinalize-shutdown-race.md, one It each, asserted over the harness's cells' facts.

.DESCRIPTION
    Runs the cells through `corpus run`, or, with -Data @{ Run = '<run>' }, reads them from a finished run without
    running anything: `make test` asserts this way over the gate's run.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/suppressfinalize-shutdown-race -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe 'suppressfinalize-shutdown-race' -Tag 'Scenario' {
    BeforeAll {
        $bug = Get-CorpusCellResult -Repro suppressfinalize-shutdown-race -Case shutdown -Variant bug -Subject mono -Run $Run
        $fixes = foreach ($variant in 'fix-order', 'fix-safehandle') {
            foreach ($subject in 'mono', 'net10', 'net8') {
                Get-CorpusCellResult -Repro suppressfinalize-shutdown-race -Case shutdown -Variant $variant -Subject $subject -Run $Run
            }
        }
        $coreclr = foreach ($subject in 'net10', 'net8') {
            Get-CorpusCellResult -Repro suppressfinalize-shutdown-race -Case shutdown -Variant bug -Subject $subject -Run $Run
        }
    }

    It 'on Mono the shutdown finalizer frees the native memory a second time' {
        $bug | Should -Reproduce
        $bug.Family.facts.hits | Should -BeGreaterThan 0
    }

    It 'one pointer is freed twice: first by Event.Dispose on the worker, then again through Event.Finalize' {
        $free = $bug.Evidence | Where-Object key -eq 'doubleFree'
        $free.status | Should -Be 'holds'
        $free.facts.firstFrames -join ' ' | Should -Match 'Event:Dispose'
        $free.facts.crashFrames -join ' ' | Should -Match 'Event:(Finalize|Dispose)'
        $free.facts.firstThread | Should -Not -Be $free.facts.crashThread
    }

    It 'CoreCLR does not finalize at exit: clean after the runs that bound the rate below epsilon' {
        foreach ($cell in $coreclr) {
            $cell | Should -BeClean
            $cell.Family.facts.hits | Should -Be 0
            $cell.Family.facts.runs | Should -BeGreaterOrEqual $cell.Family.facts.runsForClean
        }
    }

    It 'both fixes are clean on every subject after the stated runs (p below epsilon at 95%)' {
        foreach ($cell in $fixes) {
            $cell | Should -BeClean
            $cell.Family.facts.runs | Should -BeGreaterOrEqual $cell.Family.facts.runsForClean
            $cell.Family.facts.pUpper95 | Should -BeLessOrEqual $cell.Family.facts.epsilon
        }
    }
}
