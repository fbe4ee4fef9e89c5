#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/roslyn-ref-accessor-loop.md, one It each, asserted over the harness's cells' facts.

.DESCRIPTION
    Runs the cells through `corpus run`, or, with -Data @{ Run = '<run>' }, reads them from a finished run without
    running anything: `make test` asserts this way over the gate's run. The compilers with the loop (2.6.0, 2.6.1)
    are not in the NuGet copy these machines reach: their cells are asserted to be honestly unsupported and ungated.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/roslyn-ref-accessor-loop -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe 'roslyn-ref-accessor-loop' -Tag 'Scenario' {
    BeforeAll {
        $fixed = foreach ($version in '2.10.0', '4.8.0', '5.12.0') {
            Get-CorpusCellResult -Repro roslyn-ref-accessor-loop -Case writeup -Variant bug -Subject "roslyn:$version" -Run $Run
        }
        $looping = foreach ($version in '2.6.0', '2.6.1') {
            Get-CorpusCellResult -Repro roslyn-ref-accessor-loop -Case writeup -Variant bug -Subject "roslyn:$version" -Run $Run
        }
    }

    It 'a fixed compiler rejects ref before an accessor with CS0106 at once' {
        foreach ($cell in $fixed) {
            $cell | Should -BeClean
            @($cell.Family.facts.matched) -join ' ' | Should -Match 'CS0106'
        }
    }

    It 'it does so within seconds of CPU, not at the budget' {
        # The CPU the compile used: a busy host stretches its wall time, not the work (the budget is on the CPU clock).
        foreach ($cell in $fixed) {
            $cell.Family.facts.cpuSeconds | Should -Not -BeNullOrEmpty -Because "the run is on the CPU clock: $($cell.Context)"
            $cell.Family.facts.cpuSeconds | Should -BeLessThan 6 -Because $cell.Context
        }
    }

    It 'the looping compilers 2.6.0 and 2.6.1 cannot be restored here: unsupported, and not gated' {
        foreach ($cell in $looping) {
            $cell.Outcome | Should -Be 'unsupported'
            $cell.Gate | Should -Be 'unchecked'
            $cell.Expected | Should -Be 'reproduced'
            $cell.Detail | Should -Match 'NU1102'
        }
    }
}
