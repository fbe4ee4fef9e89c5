#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/filemapping-leak.md, one It each, asserted over the harness's cells.

.DESCRIPTION
    Runs the cells through `corpus run` (artifacts kept under artifacts/pester-*/), or, with -Data @{ Run = '<run>' },
    reads them from a finished run (a run id, artifacts/<id>, or `latest`) without running anything: `make test`
    asserts this way over the gate's run.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/filemapping-leak -Output Detailed"

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester -Container (New-PesterContainer -Path repros/filemapping-leak -Data @{ Run = 'latest' })"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
    $leakMB = 512    # 8 maps of 64 MB (the case's args)
}

Describe 'filemapping-leak' -Tag 'Scenario' {
    # The Linux harness's cells (Linux subjects); the Windows harness's are the Win32 context below.
    Context 'C#: MemoryMappedFile.CreateNew(null, size), view disposed, map kept, on .NET 10' -Skip:$IsWindows {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject net10 -Run $Run
            $fix = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant fix -Subject net10 -Run $Run
        }

        It 'the cell''s shared memory grows by the 512 MB leak while its RSS stays under 64 MB' {
            $bug | Should -Reproduce
            $bug.Family.facts.shmemDeltaMB | Should -BeGreaterOrEqual $leakMB -Because $bug.Context
            $bug.Family.facts.shmemDeltaMB | Should -BeLessThan ($leakMB + 32) -Because $bug.Context
            $bug.Family.facts.rssMB | Should -BeLessThan 64 -Because 'no process maps the leaked pages'
        }

        It 'the lost-memory finder sees the 8 unmapped objects, 512 MB, held only by a descriptor' {
            $bug.Family.facts.heldObjects | Should -Be 8
            $bug.Family.facts.heldFdOnlyMB | Should -Be $leakMB
        }

        It 'the heap dump holds the 8 live MemoryMappedFiles' {
            $heap = $bug.Evidence | Where-Object key -eq 'heap'
            $heap.status | Should -Be 'holds' -Because $bug.Context
            $heap.facts.type | Should -Be 'System.IO.MemoryMappedFiles.MemoryMappedFile'
            $heap.facts.seen | Should -Be 8
        }

        It 'the dump was taken while Main held the maps, asleep in Program.Run' {
            if (-not $bug.Facts -and -not $bug.ArtifactsKept) {
                Set-ItResult -Skipped -Because "the run $($bug.RunId) has no facts.json and kept no capture of this cell"
                return
            }
            @($bug.Captures | Where-Object Kind -eq 'dump').Count | Should -Be 1
            $bug | Should -HaveFrame 'Corpus.Repros.FileMappingLeak.Program.Run'
        }

        It 'the memory comes back when the process exits' {
            $bug.Family.facts.afterExitDeltaMB | Should -Not -BeNullOrEmpty -Because $bug.Context
            $bug.Family.facts.afterExitDeltaMB | Should -BeLessThan 1
        }

        It 'the fix (dispose the map) is clean: the shared memory does not grow' {
            $fix | Should -BeClean
            $fix.Family.facts.shmemDeltaMB | Should -Not -BeNullOrEmpty -Because $fix.Context
            $fix.Family.facts.shmemDeltaMB | Should -BeLessThan 16 -Because $fix.Context
        }
    }

    Context 'C++: munmap without close, on Linux' -Skip:$IsWindows {
        BeforeAll {
            $memfd = Get-CorpusCellResult -Repro filemapping-leak -Case cpp-memfd -Variant bug -Subject linux -Run $Run
            $memfdFix = Get-CorpusCellResult -Repro filemapping-leak -Case cpp-memfd -Variant fix -Subject linux -Run $Run
        }

        It 'a memfd unmapped but not closed keeps its 512 MB, in no process''s RSS' {
            $memfd | Should -Reproduce
            $memfd.Family.facts.shmemDeltaMB | Should -BeGreaterOrEqual $leakMB -Because $memfd.Context
            $memfd.Family.facts.rssMB | Should -BeLessThan 64
            $memfd.Family.facts.heldObjects | Should -Be 8
        }

        It 'perf''s syscall trace: at the marker the 8 views are unmapped and their memfds still open' {
            $trace = $memfd.Evidence | Where-Object key -eq 'trace'
            $trace.status | Should -Be 'holds' -Because $memfd.Context
            $count = @($trace.facts.counts)[0]
            $count.count | Should -Be 8
            $count.first[0] | Should -Match 'unmapped-open at=leaked fd=\d+ bytes=67108864 created=memfd_create .*by=fml::create_fill_unmap'
            @($trace.facts.sequences)[0].found[-1] | Should -Match '^t=\S+ marker line=REPRO-REACHED leaked'
        }

        It 'both cells are traced once, the cost in their record' {
            foreach ($cell in $memfd, $memfdFix) {
                $t = @($cell.Facts.traces)[0]
                $t.backend | Should -Be 'perf' -Because $cell.Context
                $t.error | Should -BeNullOrEmpty
                $t.events | Should -BeGreaterThan 0
                $t.bytes | Should -BeGreaterThan 0
                $t.slowdown | Should -Not -BeNullOrEmpty
            }
        }

        It 'closing after munmap frees the pages' {
            $memfdFix | Should -BeClean
            $memfdFix.Family.facts.shmemDeltaMB | Should -Not -BeNullOrEmpty -Because $memfdFix.Context
            $memfdFix.Family.facts.shmemDeltaMB | Should -BeLessThan 1 -Because $memfdFix.Context
        }
    }

    # The Linux harness's Wine subjects: the Win32 original and .NET for Windows, each in a cell with its own wineserver.
    Context 'Win32 and .NET for Windows under Wine: each section a deleted tmpmap file on the cell''s tmpfs' -Skip:$IsWindows {
        BeforeAll {
            $wineBugs = @(
                Get-CorpusCellResult -Repro filemapping-leak -Case win32 -Variant bug -Subject wine -Run $Run
                Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject wine-net10 -Run $Run
            )
            $wineFix = Get-CorpusCellResult -Repro filemapping-leak -Case win32 -Variant fix -Subject wine -Run $Run
        }

        It 'on Wine, the 8 tmpmap sections are held by the program and by wineserver, each by descriptor only' {
            foreach ($cell in $wineBugs) {
                $cell | Should -Reproduce
                $cell.Family.facts.heldObjects | Should -Be 8 -Because $cell.Context
                # The lost-memory finder over the cell's processes names every holder of the program's unmapped objects.
                $cell.Family.facts.PSObject.Properties['heldBy'] | Should -Not -BeNullOrEmpty -Because "the shmem family records heldBy$($cell.Context)"
                $holders = @($cell.Family.facts.heldBy)
                $names = @($holders | ForEach-Object { "$($_.command) ($($_.objects) held, $($_.mapped) mapped)" }) -join ', '
                $holders.Count | Should -Be 2 -Because "the program and wineserver hold them, and nothing else does; heldBy: $names$($cell.Context)"
                $program = $holders | Where-Object program
                $program.objects | Should -Be 8 -Because "heldBy: $names"
                $program.mapped | Should -Be 0
                $server = $holders | Where-Object { -not $_.program }
                $server.command | Should -Match '^wineserver' -Because "heldBy: $names"
                $server.objects | Should -Be 8 -Because "heldBy: $names"
                $server.mapped | Should -Be 0
            }
        }

        It 'with CloseHandle after the unmap nobody holds a section, not even wineserver' {
            $wineFix | Should -BeClean
            $wineFix.Family.facts.heldObjects | Should -Be 0 -Because $wineFix.Context
            $wineFix.Family.facts.PSObject.Properties['heldBy'] | Should -Not -BeNullOrEmpty -Because "the shmem family records heldBy$($wineFix.Context)"
            @($wineFix.Family.facts.heldBy | Where-Object { $_ }).Count | Should -Be 0
        }
    }

    # The Windows harness's cells (corpus.exe: on Windows, or under Wine in `corpus winsmoke`).
    Context 'Win32: CreateFileMapping on the page file, UnmapViewOfFile without CloseHandle, on Windows' -Skip:(-not $IsWindows) {
        BeforeAll {
            $bug = Get-CorpusCellResult -Repro filemapping-leak -Case win32 -Variant bug -Subject windows -Run $Run
            $fix = Get-CorpusCellResult -Repro filemapping-leak -Case win32 -Variant fix -Subject windows -Run $Run
            # Wine's loader in the run's environment: the run was under Wine, where there is no procdump.exe.
            $underWine = [bool] ($bug.Facts.inheritedEnv -and $bug.Facts.inheritedEnv.WINELOADER)
        }

        It 'the process holds the 8 page-file sections by handle, 512 MB, while its working set stays under 64 MB' {
            $bug.Family.outcome | Should -Be 'reproduced' -Because $bug.Context
            $bug.Family.facts.heldObjects | Should -Be 8 -Because $bug.Context
            $bug.Family.facts.heldFdOnlyMB | Should -Be $leakMB
            $bug.Family.facts.rssMB | Should -BeLessThan 64 -Because 'no view maps the leaked pages'
        }

        It 'the sections are gone when the process exits' {
            $bug.Family.facts.afterExitDeltaMB | Should -BeLessThan 1
        }

        It 'the stack snapshot shows main holding them; without procdump.exe (Wine) the cell is an error naming it, not a pass' {
            if ($underWine) {
                $bug.Outcome | Should -Be 'error' -Because 'a leak without its stack evidence is neither reproduced nor another bug'
                ($bug.Evidence | Where-Object key -eq 'stacks').detail | Should -Match 'procdump\.exe is not on PATH'
            }
            else {
                $bug | Should -Reproduce
                $bug | Should -HaveFrame 'filemapping_leak_win32!main'
            }
        }

        It 'the fix (CloseHandle after the unmap) holds no section' {
            $fix | Should -BeClean
            $fix.Family.facts.heldObjects | Should -Be 0
            $fix.Family.facts.shmemDeltaMB | Should -BeLessThan 16 -Because $fix.Context
        }
    }
}
