#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/ngen-imagelist-corruption.md that these machines can check, one It each.

.DESCRIPTION
    Runs the cells through `corpus run` (artifacts kept under artifacts/pester-*/), or, with -Data @{ Run = '<run>' },
    reads them from a finished run without running anything. The ngen.exe cells need real Windows: here they must
    say so (`unsupported`), not pass or fail.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/ngen-imagelist-corruption -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe 'ngen-imagelist-corruption' -Tag 'Scenario' {
    # The Linux harness's cells; the Windows harness's are the Windows registry context below.
    Context 'the registry fixture in a Wine prefix' -Skip:$IsWindows {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro ngen-imagelist-corruption -Case fixture -Variant bug -Subject wine -Run $Run
            $fix = Get-CorpusCellResult -Repro ngen-imagelist-corruption -Case fixture -Variant fix -Subject wine -Run $Run
        }

        It 'the write-up''s NgenCorrupt.reg is applied in the cell''s prefix and read back as written' {
            $bug | Should -BeClean
            $bug.Fixture.files | Should -Be @('fixture/NgenCorrupt.reg', 'fixture/bug.reg') -Because $bug.Context
            $bug.Fixture.into | Should -BeLike 'Wine prefix *'
            $bug.Fixture.valuesReadBack | Should -Be 1
        }

        It 'a Win32 program sees the corrupt ImageList under NGenService\Roots' {
            # What the Win32 reader said it saw: the line the fixture signature matched, from facts.json.
            $bug.Family.facts.matched | Should -Contain 'REPRO-REACHED fixture seen: ImageList = 00 69 00 6f' -Because $bug.Context
        }

        It 'afterwards the prefix is as before: the key absent again, its parent''s listing unchanged' {
            $bug.Fixture.restoredOk | Should -BeTrue -Because $bug.Fixture.restored
            $bug.Fixture.keysAbsentAgain | Should -Be 1
        }

        It 'the fix (Roots removed) leaves NGenService without Roots, and is restored too' {
            $fix | Should -BeClean
            # What the Win32 reader said it saw: the line the fixture signature matched, from facts.json.
            $fix.Family.facts.matched | Should -Contain 'REPRO-REACHED fixture seen: NGenService without Roots' -Because $fix.Context
            $fix.Fixture.restoredOk | Should -BeTrue -Because $fix.Fixture.restored
        }
    }

    # The Windows harness's cells (corpus.exe: on Windows, or under Wine in `corpus winsmoke`).
    Context 'the registry fixture in the Windows machine''s registry' -Skip:(-not $IsWindows) {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro ngen-imagelist-corruption -Case fixture -Variant bug -Subject windows -Run $Run
            $fix = Get-CorpusCellResult -Repro ngen-imagelist-corruption -Case fixture -Variant fix -Subject windows -Run $Run
        }

        It 'the write-up''s NgenCorrupt.reg is applied to the registry and read back as written' {
            $bug | Should -BeClean
            $bug.Fixture.files | Should -Be @('fixture/NgenCorrupt.reg', 'fixture/bug.reg') -Because $bug.Context
            $bug.Fixture.into | Should -Be 'this Windows machine''s registry'
            $bug.Fixture.valuesReadBack | Should -Be 1
        }

        It 'a Win32 program sees the corrupt ImageList under NGenService\Roots' {
            # What the Win32 reader said it saw: the line the fixture signature matched, from facts.json.
            $bug.Family.facts.matched | Should -Contain 'REPRO-REACHED fixture seen: ImageList = 00 69 00 6f' -Because $bug.Context
        }

        It 'afterwards the registry is as before: the key absent again, its parent''s listing unchanged' {
            $bug.Fixture.restoredOk | Should -BeTrue -Because $bug.Fixture.restored
            $bug.Fixture.keysAbsentAgain | Should -Be 1
        }

        It 'the fix (Roots removed) leaves NGenService without Roots, and is restored too' {
            $fix | Should -BeClean
            $fix.Fixture.deletedKeysAbsent | Should -Be 1
            # What the Win32 reader said it saw: the line the fixture signature matched, from facts.json.
            $fix.Family.facts.matched | Should -Contain 'REPRO-REACHED fixture seen: NGenService without Roots' -Because $fix.Context
            $fix.Fixture.restoredOk | Should -BeTrue -Because $fix.Fixture.restored
        }
    }

    # On Windows these cells run ngen.exe for real; here the claim is only that Linux says so.
    Context 'ngen.exe itself' -Skip:$IsWindows {
        It 'needs real Windows: the <Variant> cell is unsupported here, with the reason' -ForEach @(@{ Variant = 'bug' }, @{ Variant = 'fix' }) {
            $cell = Get-CorpusCellResult -Repro ngen-imagelist-corruption -Case ngen -Variant $Variant -Subject windows -Run $Run
            $cell.Outcome | Should -Be 'unsupported'
            $cell.Detail | Should -Not -BeNullOrEmpty
        }
    }
}
