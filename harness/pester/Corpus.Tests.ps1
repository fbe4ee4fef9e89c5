<#
.SYNOPSIS
    The corpus as Pester tests: one It per cell of `corpus list --json`, each running that cell through `corpus run`
    and asserting its outcome against expected/.

.DESCRIPTION
    Thin on purpose: building, running, containment, judging and the gate all stay in `corpus`; this file maps
    cells to tests. Needs PowerShell 7 and Pester 5, and a built harness (`ci/setup.sh`, or on Windows
    `dotnet build harness/Corpus.Harness -c Release -o build/harness/corpus`). It is not run on the Linux machines
    this corpus is developed on (no PowerShell there); `make test` checks its syntax only.

.EXAMPLE
    Invoke-Pester -Path harness/pester/Corpus.Tests.ps1 -Output Detailed

.EXAMPLE
    $data = @{ Repro = 'ngen-imagelist-corruption' }
    $container = New-PesterContainer -Path harness/pester/Corpus.Tests.ps1 -Data $data
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
    if ($Root -eq '') {
        $Root = (Resolve-Path (Join-Path (Join-Path $PSScriptRoot '..') '..')).Path
    }
    $corpusDll = Join-Path $Root (Join-Path 'build' (Join-Path 'harness' (Join-Path 'corpus' 'corpus.dll')))
    $listArgs = @($corpusDll, 'list', '--json', '--root', $Root)
    if ($Repro -ne '') {
        $listArgs += @('--repro', $Repro)
    }
    $listed = & dotnet @listArgs
    if ($LASTEXITCODE -ne 0) {
        throw "corpus list exited $LASTEXITCODE; run 'dotnet $corpusDll validate' for the input errors"
    }
    $cells = ($listed | Out-String | ConvertFrom-Json).cells
    $repros = @()
    foreach ($group in ($cells | Group-Object -Property repro)) {
        $items = @()
        foreach ($cell in $group.Group) {
            $items += @{
                Case     = $cell.case
                Variant  = $cell.variant
                Subject  = $cell.subject
                Expected = $cell.expected
                Reason   = $cell.reason
                RunArgs  = @($cell.args)
                Root     = $Root
                Corpus   = $corpusDll
            }
        }
        $repros += @{ Name = $group.Name; Cells = $items }
    }
}

Describe 'repro <Name>' -ForEach $repros {
    It '<Case> <Variant> on <Subject> is <Expected>' -ForEach $Cells {
        if ($null -eq $Expected) {
            Set-ItResult -Skipped -Because 'expected/ has no entry for this cell'
            return
        }
        # A run id of its own, so the summary read below is this cell's and nothing is overwritten.
        $runId = 'pester-' + [guid]::NewGuid().ToString('N').Substring(0, 12)
        $output = & dotnet $Corpus @RunArgs --root $Root --run-id $runId 2>&1
        $exit = $LASTEXITCODE
        $summaryFile = Join-Path $Root (Join-Path 'artifacts' (Join-Path $runId 'summary.json'))
        if (-not (Test-Path $summaryFile)) {
            throw "corpus run exited $exit without a summary: $($output | Out-String)"
        }
        $summary = Get-Content -Raw -Path $summaryFile | ConvertFrom-Json
        $summary.cells.Count | Should -Be 1
        $cell = $summary.cells[0]
        $cell.outcome | Should -Be $Expected -Because "$($cell.detail) (expected: $Reason; rerun: $($cell.rerun))"
        $cell.gate | Should -Be 'pass'
    }
}
