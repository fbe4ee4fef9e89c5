#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The corpus as Pester tests: one It per cell of `corpus list --json`, each running that cell through `corpus run`
    and asserting its outcome against expected/.

.DESCRIPTION
    Thin on purpose: building, running, containment, judging and the gate all stay in `corpus`; this file maps
    cells to tests through the Corpus module (Get-CorpusCell, Invoke-CorpusCell). Needs the pinned pwsh and Pester
    and a built harness: `make setup`, then ci/pwsh.sh (or on Windows PowerShell 7 with Pester 5.7.1 and
    `dotnet build harness/Corpus.Harness -c Release -o build/harness/corpus`). Each cell is a run of its own,
    artifacts/pester-*/; a cell that differs from expected/ keeps its artifacts there.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester -Path harness/pester/Corpus.Tests.ps1 -Output Detailed"

.EXAMPLE
    $container = New-PesterContainer -Path harness/pester/Corpus.Tests.ps1 -Data @{ Repro = 'ngen-imagelist-corruption' }
    $config = New-PesterConfiguration
    $config.Run.Container = $container
    $config.TestResult.Enabled = $true
    $config.TestResult.OutputFormat = 'NUnitXml'
    Invoke-Pester -Configuration $config
#>
param(
    [string] $Repro = '',
    [string] $Root = ''
)

BeforeDiscovery {
    Import-Module (Join-Path $PSScriptRoot Corpus Corpus.psd1)
    $listArgs = @{}
    if ($Repro) { $listArgs.Repro = $Repro }
    if ($Root) { $listArgs.Root = $Root }
    $repros = foreach ($group in (Get-CorpusCell @listArgs | Group-Object -Property Repro)) {
        @{ Name = $group.Name; Cells = @($group.Group | ForEach-Object { @{ Cell = $_; Root = $Root } }) }
    }
}

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot Corpus Corpus.psd1)
}

Describe 'repro <Name>' -Tag 'Scenario' -ForEach $repros {
    It '<Cell.Case> <Cell.Variant> on <Cell.Subject> is <Cell.Expected>' -ForEach $Cells {
        if ($null -eq $Cell.Expected) {
            Set-ItResult -Skipped -Because 'expected/ has no entry for this cell'
            return
        }
        $runArgs = @{}
        if ($Root) { $runArgs.Root = $Root }
        # Only the outcome is asserted: a cell that matches expected/ keeps its facts, not its dumps.
        $result = $Cell | Invoke-CorpusCell -Prune @runArgs
        $result.Outcome | Should -Be $Cell.Expected -Because "$($result.Detail) (expected: $($Cell.Reason); artifacts: $($result.ArtifactDir); re-run: $($result.Rerun))"
        $result.Gate | Should -Be 'pass'
    }
}
