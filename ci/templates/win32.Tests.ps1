#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/@ID@.md, one It each, asserted over the facts of the harness's cells.

.DESCRIPTION
    Runs the cells through `corpus run` (artifacts kept under artifacts/pester-*/), or, with -Data @{ Run = '<run>' },
    reads them from a finished run (a run id, artifacts/<id>, or `latest`) without running anything: `make test`
    asserts this way over the gate's run. Written by `make new-repro` for the skeleton's example bug. The program is
    Win32: the Linux harness says its `windows` cells are unsupported, and the Windows harness (corpus.exe, under
    PowerShell 7 on Windows) runs them.

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
    # REPLACE: the Its below assert the skeleton's example bug. Make each one a claim of docs/labs/@ID@.md (one It per
    # claim, at least one per cell of expected/@ID@.json), reading the facts that show it: $cell.Family.facts (the
    # family's facts), $cell.Evidence, $cell.Fixture, Should -HaveFrame (facts.json in docs/output.md). An It
    # that only checks the outcome is not enough; never read the cell's text logs. A `wine` subject's cells (the Linux
    # harness's) get a context of their own with -Skip:$IsWindows.

    # The Linux harness's cells: the windows subject is not there, and the cells say so without running anything.
    Context 'Win32: the windows subject on Linux' -Skip:$IsWindows {
        BeforeAll {
            $cells = @{}
            foreach ($variant in 'bug', 'fix') {
                $cells[$variant] = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant $variant -Subject windows -Run $Run
            }
        }

        It 'the <Variant> cell needs real Windows: unsupported here, no run, no family verdict' -ForEach @(@{ Variant = 'bug' }, @{ Variant = 'fix' }) {
            $cell = $cells[$Variant]
            $cell.Outcome | Should -Be 'unsupported' -Because $cell.Context
            $cell.Family | Should -BeNullOrEmpty -Because 'no family judged a run'
            @($cell.Runs | Where-Object { $_ }).Count | Should -Be 0
        }
    }

    # The Windows harness's cells (corpus.exe on Windows).
    Context 'Win32: the example bug, on Windows' -Skip:(-not $IsWindows) {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant bug -Subject windows -Run $Run
            $fix = Get-CorpusCellResult -Repro '@ID@' -Case main -Variant fix -Subject windows -Run $Run
        }

        It 'the bug variant uses the event''s handle after CloseHandle and gets ERROR_INVALID_HANDLE' {
            $bug | Should -Reproduce
            # The process family's facts: how the run ended, and the text each output pattern of the signature matched.
            $bug.Family.facts.status | Should -Be 'exit 1' -Because $bug.Context
            $bug.Family.facts.matched | Should -Contain 'REPRO-REACHED bug' -Because $bug.Context
            $bug.Family.facts.matched | Should -Contain 'ERROR_INVALID_HANDLE'
        }

        It 'the fix variant never touches the closed handle and finishes' {
            $fix | Should -BeClean
            $fix.Family.facts.status | Should -Be 'exit 0' -Because $fix.Context
            $fix.Family.facts.matched | Should -Not -Contain 'REPRO-REACHED bug'
        }
    }
}
