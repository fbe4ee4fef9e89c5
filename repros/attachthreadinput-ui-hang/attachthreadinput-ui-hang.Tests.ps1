#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/attachthreadinput-ui-hang.md, one It each, asserted over the harness's cells' facts.

.DESCRIPTION
    Runs the cells through `corpus run`, or, with -Data @{ Run = '<run>' }, reads them from a finished run without
    running anything: `make test` asserts this way over the gate's run.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/attachthreadinput-ui-hang -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)

    # The hang lasts the expected time within 25% and ends within 1 s of the other thread's exit.
    function Assert-Hang($cell, [double] $expectedMs) {
        $cell | Should -Reproduce
        $hang = $cell.Family.facts
        $hang.expectedMs | Should -Be $expectedMs
        [math]::Abs($hang.blockMs - $expectedMs) | Should -BeLessOrEqual (0.25 * $expectedMs) -Because $cell.Context
        $hang.exitToReturnMs | Should -BeLessOrEqual 1000
        $hang.exitToReturnMs | Should -BeGreaterOrEqual -100
    }
}

Describe 'attachthreadinput-ui-hang' -Tag 'Scenario' {
    BeforeAll {
        $cpp = Get-CorpusCellResult -Repro attachthreadinput-ui-hang -Case cpp -Variant bug -Subject wine -Run $Run
        $csharp = Get-CorpusCellResult -Repro attachthreadinput-ui-hang -Case csharp -Variant bug -Subject wine-net10 -Run $Run
        $fiveSeconds = foreach ($subject in 'wine-net10', 'wine-net8') {
            Get-CorpusCellResult -Repro attachthreadinput-ui-hang -Case csharp-5s -Variant bug -Subject $subject -Run $Run
        }
        $clean = foreach ($variant in 'fix', 'control') {
            Get-CorpusCellResult -Repro attachthreadinput-ui-hang -Case cpp -Variant $variant -Subject wine -Run $Run
            Get-CorpusCellResult -Repro attachthreadinput-ui-hang -Case csharp -Variant $variant -Subject wine-net10 -Run $Run
        }
    }

    It 'Win32: SetFocus blocks for the worker''s 8 s idle and returns when the worker exits' {
        Assert-Hang $cpp 8000
    }

    It 'C#: SetFocus blocks until the pool retires its thread, 20 s, and returns within 1 s of that thread''s exit' {
        Assert-Hang $csharp 20000
    }

    It 'the hang follows the pool''s timeout: DOTNET_ThreadPool_ThreadTimeoutMs=5000 gives 5 s on .NET 10 and .NET 8' {
        foreach ($cell in $fiveSeconds) { Assert-Hang $cell 5000 }
    }

    It 'both threads report the same focus window: their input queues are attached' {
        foreach ($cell in $cpp, $csharp) {
            $seen = @($cell.Family.facts.evidence) -join "`n"
            $seen | Should -Match 'ui_focus=(0x[0-9a-f]+) ui_active=\S+ worker_focus=\1\b' -Because $cell.Context
        }
    }

    It 'the UI thread''s stack is in NtUserSetFocus while it hangs' {
        $cpp | Should -HaveFrame 'NtUserSetFocus'
        $csharp | Should -HaveFrame 'NtUserSetFocus'
    }

    It 'Wine''s +win trace: the worker''s (the pool thread''s) SetParent into the UI window, then the UI thread''s SetFocus on one shared input queue' {
        # The Win32 worker idles 8 s; the pool retires its thread after DOTNET_ThreadPool_ThreadTimeoutMs=5000.
        foreach ($traced in @{ Cell = $cpp; IdleMs = 8000 }, @{ Cell = $fiveSeconds[0]; IdleMs = 5000 }) {
            $cell = $traced.Cell
            $trace = $cell.Evidence | Where-Object key -eq 'trace'
            $trace.status | Should -Be 'holds' -Because $cell.Context
            $found = @(@($trace.facts.sequences)[0].found)
            $found[0] -match 'CrossThreadSetParent child=(0x[0-9a-f]+) parent=(0x[0-9a-f]+) thread=([0-9a-f]+) parentThread=([0-9a-f]+)' |
                Should -BeTrue -Because "the first event is the cross-thread SetParent: $($found[0])"
            $worker, $ui = $Matches[3], $Matches[4]
            $worker | Should -Not -Be $ui
            # The UI thread's previous focus is the worker's window: only a shared queue gives one thread another's focus.
            $found[1] -match "InputQueueShared thread=$ui focus=\S+ previous=\S+ otherThread=$worker silentMs=(\d+)" |
                Should -BeTrue -Because "the UI thread's SetFocus sees the worker's window: $($found[1])"
            # And the UI thread then printed nothing for the length of the worker's idle.
            [math]::Abs([double] $Matches[1] - $traced.IdleMs) | Should -BeLessOrEqual (0.25 * $traced.IdleMs) -Because $cell.Context
        }
    }

    It 'the traced cells on wine are traced once, their cost recorded' {
        $traced = @($cpp, $fiveSeconds[0]) + @($clean | Where-Object { $_.Case -eq 'cpp' })
        foreach ($cell in $traced) {
            $t = @($cell.Facts.traces)[0]
            $t.backend | Should -Be 'winedebug' -Because $cell.Context
            $t.error | Should -BeNullOrEmpty
            $t.events | Should -BeGreaterThan 0
            $t.bytes | Should -BeGreaterThan 0
        }
    }

    It 'the fix and the control never block SetFocus' {
        foreach ($cell in $clean) {
            $cell | Should -BeClean
            $cell.Family.facts.blockMs | Should -BeLessOrEqual 200 -Because $cell.Context
        }
    }
}
