#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
# The Corpus module without running a cell: a finished run written into TestDrive in its records' shape, and the
# real `corpus list`. Run by make unit.

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. Corpus Corpus.psd1)

    # A run of three cells, each with its facts.json: the bug cell's folder kept with a dump-facts file, the fix cell's
    # runs deleted (as without --keep), and a pruned net8 cell whose captured threads are only in its facts.
    function New-Run([string] $Root) {
        $facts = {
            param($subject, $variant, $outcome, $captures, $kept, $family)
            $dir = "artifacts/t1/filemapping-leak/csharp/$variant/$subject"
            New-Item -ItemType Directory -Path (Join-Path $Root $dir) -Force | Out-Null
            @{ schema = 2; cell = @{ repro = 'filemapping-leak'; case = 'csharp'; variant = $variant; subject = $subject }
               outcome = $outcome; expected = $outcome; gate = 'pass'; detail = "detail of $variant"; keyFigures = @('held by fd 8 (512.0 MB)')
               family = $family; evidence = @(@{ key = 'heap'; status = 'holds' }); runs = @(); captures = $captures; captureErrors = @()
               runtime = "$subject /usr/bin/x"
               artifacts = if ($kept) { @{ dir = $dir } } else { $null }
               rerun = "make run REPRO=filemapping-leak CASE=csharp VARIANT=$variant SUBJECT=$subject KEEP=1" } |
                ConvertTo-Json -Depth 8 | Set-Content -Path (Join-Path $Root "$dir/facts.json")
            @{ repro = 'filemapping-leak'; case = 'csharp'; variant = $variant; subject = $subject; outcome = $outcome; facts = "$dir/facts.json" }
        }
        $cellDir = 'artifacts/t1/filemapping-leak/csharp/bug/net10'
        New-Item -ItemType Directory -Path (Join-Path $Root "$cellDir/captures") -Force | Out-Null
        Set-Content -Path (Join-Path $Root "$cellDir/captures/snapshot-0.core") -Value 'core'
        @{ threads = @(@{ managedThreadId = 1; frames = @('System.Threading.Thread.Sleep(Int32)', 'Corpus.Repros.FileMappingLeak.Program.Run(System.String[])') }) } |
            ConvertTo-Json -Depth 5 | Set-Content -Path (Join-Path $Root "$cellDir/captures/snapshot-0.facts.json")
        $bugCapture = @{ backend = 'createdump'; run = 'run'; file = "$cellDir/captures/snapshot-0.core"; bytes = 4
                         threads = @(@{ thread = 'managed 1'; crashing = $false; frames = @('System.Threading.Thread.Sleep(Int32)', 'Corpus.Repros.FileMappingLeak.Program.Run(System.String[])') }) }
        $net8Capture = @{ backend = 'createdump'; run = 'run'; file = 'artifacts/t1/filemapping-leak/csharp/bug/net8/captures/snapshot-0.core'; bytes = 4
                          threads = @(@{ thread = 'managed 1'; crashing = $false; frames = @('Corpus.Repros.FileMappingLeak.Program.Main(System.String[])') }) }
        $shmem = @{ key = 'shmem'; facts = @{ heldObjects = 8; rssMB = 30.2 } }
        $cells = @((& $facts 'net10' 'bug' 'reproduced' @($bugCapture) $true $shmem), (& $facts 'net10' 'fix' 'clean' @() $false $shmem),
                   (& $facts 'net8' 'bug' 'reproduced' @($net8Capture) $false $shmem))
        @{ schema = 2; runId = 't1'; passed = $true; seconds = 1.0; inputErrors = @(); cells = $cells } |
            ConvertTo-Json -Depth 6 | Set-Content -Path (Join-Path $Root 'artifacts/t1/summary.json')
    }
}

Describe 'Get-CorpusRun' -Tag 'CI' {
    BeforeAll {
        New-Run $TestDrive
        $run = Get-CorpusRun t1 -Root $TestDrive
    }

    It 'reads every cell from its facts.json' {
        $run.RunId | Should -Be 't1'
        $run.Cells.Count | Should -Be 3
        $run.Cells[0].Family.facts.rssMB | Should -Be 30.2
        $run.Cells[0].Runtime | Should -Be 'net10 /usr/bin/x'
    }

    It 'names the field when a cell''s facts.json is missing' {
        $gone = Join-Path $TestDrive 'artifacts/t2'
        New-Item -ItemType Directory -Path $gone -Force | Out-Null
        @{ schema = 2; runId = 't2'; passed = $true; seconds = 1.0; inputErrors = @()
           cells = @(@{ repro = 'r'; case = 'c'; variant = 'bug'; subject = 's'; facts = 'artifacts/t2/r/c/bug/s/facts.json' }) } |
            ConvertTo-Json -Depth 4 | Set-Content -Path (Join-Path $gone 'summary.json')
        { Get-CorpusRun t2 -Root $TestDrive } | Should -Throw -ExpectedMessage '*field ''cells`[0`].facts''*facts.json is missing'
    }

    It 'sorts a createdump capture into Dumps and its dump-facts file into StackSnapshots' {
        $bug = $run.Cells | Where-Object { $_.Variant -eq 'bug' -and $_.Subject -eq 'net10' }
        $bug.ArtifactsKept | Should -BeTrue
        $bug.Dumps | Should -Be @(Join-Path $TestDrive 'artifacts/t1/filemapping-leak/csharp/bug/net10/captures/snapshot-0.core')
        $bug.StackSnapshots | Should -BeLike '*snapshot-0.facts.json'
    }

    It 'says when a cell''s artifact folder is gone' {
        ($run.Cells | Where-Object Variant -eq 'fix').ArtifactsKept | Should -BeFalse
    }

    It 'narrows to the cells asked for' {
        (Get-CorpusRun t1 -Root $TestDrive -Variant fix).Cells.Variant | Should -Be 'fix'
    }

    It 'reads a pruned cell''s facts.json: family, evidence and the captured threads' {
        $net8 = (Get-CorpusRun t1 -Root $TestDrive -Subject net8).Cells[0]
        $net8.ArtifactsKept | Should -BeFalse
        $net8.Family.facts.heldObjects | Should -Be 8
        $net8.Evidence[0].status | Should -Be 'holds'
        $net8.Captures[0].Exists | Should -BeFalse
        $net8.Captures[0].Threads[0].frames | Should -HaveCount 1
    }

    It 'names the paths it tried when there is no such run' {
        { Get-CorpusRun no-such-run -Root $TestDrive } | Should -Throw -ExpectedMessage "no finished run at 'no-such-run'*"
    }
}

Describe 'Should -Reproduce, -BeClean, -HaveFrame' -Tag 'CI' {
    BeforeAll {
        New-Run $TestDrive
        $bug = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject net10 -Run t1 -Root $TestDrive
        $fix = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant fix -Subject net10 -Run t1 -Root $TestDrive
    }

    It 'pass on the outcome they name' {
        $bug | Should -Reproduce
        $fix | Should -BeClean
        $fix | Should -Not -Reproduce
        $bug | Should -HaveFrame 'FileMappingLeak.Program.Run'
    }

    It 'HaveFrame reads facts.json''s threads when the capture files were pruned' {
        $net8 = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject net8 -Run t1 -Root $TestDrive
        $net8 | Should -HaveFrame 'FileMappingLeak.Program.Main'
        { $net8 | Should -HaveFrame 'Program.Run' } | Should -Throw -ExpectedMessage '*none of 1 frames in 1 stack snapshots*'
    }

    It 'fail with the cell''s detail, artifact folder and re-run line' {
        { $bug | Should -BeClean } | Should -Throw -ExpectedMessage '*filemapping-leak:csharp/bug/net10 clean, but it was reproduced*Detail: detail of bug*Artifacts: *csharp/bug/net10*Re-run: make run REPRO=filemapping-leak CASE=csharp VARIANT=bug SUBJECT=net10 KEEP=1*'
        { $fix | Should -Reproduce } | Should -Throw -ExpectedMessage '*Artifacts: *(runs and captures deleted: *'
    }

    It 'HaveFrame fails on a frame no stack holds, and on a cell with no stack snapshot' {
        { $bug | Should -HaveFrame 'ObjectManager' } | Should -Throw -ExpectedMessage "*none of 2 frames in 1 stack snapshots*"
        { $fix | Should -HaveFrame 'Main' } | Should -Throw -ExpectedMessage '*has no stack snapshot to read*'
    }

    It 'refuse what is not a cell result' {
        { 'reproduced' | Should -Reproduce } | Should -Throw -ExpectedMessage '*Expected a cell result*'
    }

    It 'a run that lacks the cell is an error, not a pass' {
        { Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject mono -Run t1 -Root $TestDrive } |
            Should -Throw -ExpectedMessage '*holds no cell filemapping-leak:csharp/bug/mono'
    }
}

Describe 'Get-CorpusCell' -Tag 'CI' {
    It 'lists a repro''s cells with their expected outcomes (corpus list --json)' {
        $cells = @(Get-CorpusCell -Repro filemapping-leak -Case csharp -Subject net10)
        $cells.Count | Should -Be 2
        ($cells | Where-Object Variant -eq 'bug').Expected | Should -Be 'reproduced'
        ($cells | Where-Object Variant -eq 'fix').Arguments | Should -Contain '--variant'
    }

    It 'turns corpus''s input error into an error' {
        { Get-CorpusCell -Repro no-such-repro } | Should -Throw -ExpectedMessage 'corpus list exited 2*'
    }

    It '<Name> has help with a synopsis and examples' -ForEach @(
        @{ Name = 'Get-CorpusCell' }, @{ Name = 'Invoke-CorpusCell' }, @{ Name = 'Get-CorpusRun' }, @{ Name = 'Get-CorpusCellResult' }) {
        $help = Get-Help $Name -Full
        $help.Synopsis | Should -Not -BeLike "*$Name*"
        @($help.Examples.Example).Count | Should -BeGreaterThan 0
    }
}

Describe 'Invoke-CorpusCell' -Tag 'CI' {
    # A real cell that needs no build and no Wine: ngen.exe on the windows subject, unsupported on Linux in well
    # under a second.
    BeforeAll {
        # corpus points artifacts/latest at its last run; these runs are removed after, so it goes back to where it was.
        $latest = Join-Path (Resolve-Path (Join-Path $PSScriptRoot .. .. ..)).Path (Join-Path artifacts latest)
        $latestBefore = (Get-Item -LiteralPath $latest -ErrorAction Ignore).Target
        $keptId = 'pester-unit-' + [guid]::NewGuid().ToString('N').Substring(0, 8)
        $prunedId = 'pester-unit-' + [guid]::NewGuid().ToString('N').Substring(0, 8)
        $cell = @{ Repro = 'ngen-imagelist-corruption'; Case = 'ngen'; Variant = 'bug'; Subject = 'windows' }
        $kept = Invoke-CorpusCell @cell -RunId $keptId
        $pruned = Invoke-CorpusCell @cell -RunId $prunedId -Prune
    }
    AfterAll {
        # The runs' own folders, wherever the module's root put them.
        foreach ($run in $kept, $pruned) { if ($run.RunDir) { Remove-Item -Recurse -Force -LiteralPath $run.RunDir -ErrorAction Ignore } }
        Remove-Item -LiteralPath $latest -Force -ErrorAction Ignore
        if ($latestBefore) { New-Item -ItemType SymbolicLink -Path $latest -Target $latestBefore | Out-Null }
    }

    It 'runs the cell through corpus run and returns its result with the re-run line' {
        $kept.Outcome | Should -Be 'unsupported'
        $kept.Expected | Should -Be 'unsupported'
        $kept.Gate | Should -Be 'pass'
        $kept.ExitCode | Should -Be 0
        $kept.RunId | Should -Be $keptId
        $kept.Rerun | Should -Be 'make run REPRO=ngen-imagelist-corruption CASE=ngen VARIANT=bug SUBJECT=windows KEEP=1'
        $kept | Should -Not -Reproduce
    }

    It 'keeps the cell''s artifacts unless told -Prune' {
        $kept.ArtifactsKept | Should -BeTrue
        Test-Path -LiteralPath (Join-Path $kept.ArtifactDir 'rerun.txt') | Should -BeTrue
        $pruned.ArtifactsKept | Should -BeFalse
    }

    It 'turns bad input (corpus exit 2) into an error' {
        { Invoke-CorpusCell -Repro ngen-imagelist-corruption -Case no-such-case -Variant bug -Subject windows -RunId $prunedId } |
            Should -Throw -ExpectedMessage 'corpus run exited 2*'
    }
}

Describe 'the Corpus module' -Tag 'CI' {
    It 'exports exactly the functions of Public/, one a file' {
        $moduleDir = Join-Path $PSScriptRoot .. Corpus
        $manifest = Test-ModuleManifest -Path (Join-Path $moduleDir 'Corpus.psd1')
        $public = @(Get-ChildItem -Path (Join-Path $moduleDir 'Public') -Filter '*.ps1' -File | ForEach-Object BaseName | Sort-Object)
        @($manifest.ExportedFunctions.Keys | Sort-Object) | Should -Be $public
        @((Get-Module Corpus).ExportedCommands.Keys | Sort-Object) | Should -Be $public
    }
}

Describe 'the Tests files of the tree' -Tag 'CI' {
    It 'tag each Describe with exactly one of CI, Feature or Scenario' {
        $root = (Resolve-Path (Join-Path $PSScriptRoot .. .. ..)).Path
        $files = Get-ChildItem -Path (Join-Path $root 'harness'), (Join-Path $root 'repros') -Filter '*.Tests.ps1' -Recurse -File
        $files.Count | Should -BeGreaterThan 2
        $untagged = foreach ($file in $files) {
            $ast = [System.Management.Automation.Language.Parser]::ParseFile($file.FullName, [ref] $null, [ref] $null)
            $describes = $ast.FindAll({ param($node) $node -is [System.Management.Automation.Language.CommandAst] -and
                                        $node.GetCommandName() -eq 'Describe' }, $true)
            foreach ($describe in $describes) {
                $elements = $describe.CommandElements
                $tags = @()
                for ($i = 0; $i -lt $elements.Count - 1; $i++) {
                    if ($elements[$i] -is [System.Management.Automation.Language.CommandParameterAst] -and $elements[$i].ParameterName -eq 'Tag') {
                        $tags = @($elements[$i + 1].SafeGetValue())
                    }
                }
                if (@($tags | Where-Object { $_ -in 'CI', 'Feature', 'Scenario' }).Count -ne 1) {
                    "$($file.FullName):$($describe.Extent.StartLineNumber): tags '$($tags -join ', ')'"
                }
            }
        }
        $untagged | Should -BeNullOrEmpty
    }
}
