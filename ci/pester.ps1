<#
.SYNOPSIS
    The repros' Pester tests (repros/<id>/<id>.Tests.ps1), over a finished run or running their cells; JUnit XML
    beside the run's own. Exits with the number of failed tests (0: all passed).
.EXAMPLE
    ci/pwsh.sh -File ci/pester.ps1 -Run latest
.EXAMPLE
    ci/pwsh.sh -File ci/pester.ps1 -Repro filemapping-leak
#>
param(
    [string] $Run = '',
    [string[]] $Repro = @()
)
$ErrorActionPreference = 'Stop'
Import-Module (Join-Path $PSScriptRoot .. harness pester Corpus Corpus.psd1)
$Repro = @($Repro | ForEach-Object { $_ -split ',' } | Where-Object { $_ })
$files = @(Get-ChildItem -Path repros -Filter '*.Tests.ps1' -Recurse -Depth 1 |
           Where-Object { -not $Repro -or $_.Directory.Name -in $Repro } | Sort-Object FullName)
if ($files.Count -eq 0) {
    throw "no repros/<id>/<id>.Tests.ps1 for $(if ($Repro) { $Repro -join ', ' } else { 'any repro' })"
}
$config = New-PesterConfiguration
$config.Run.Container = @($files | ForEach-Object { New-PesterContainer -Path $_.FullName -Data @{ Run = $Run } })
$config.Run.Exit = $true
$config.Output.Verbosity = 'Detailed'
$config.TestResult.Enabled = $true
$config.TestResult.OutputFormat = 'JUnitXml'
$config.TestResult.OutputPath = if ($Run) { Join-Path (Get-CorpusRun $Run).Path 'pester.junit.xml' } else { Join-Path 'build' 'pester.junit.xml' }
Invoke-Pester -Configuration $config
