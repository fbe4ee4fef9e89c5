<#
.SYNOPSIS
    The Pester layer must be able to fail: a copy of a finished run's attachthreadinput-ui-hang cells with one fact
    planted wrong (the Win32 hang's length) must fail exactly the It that reads it, with the cell's detail, artifacts
    and re-run line in the message. Exits non-zero when it does not.
.EXAMPLE
    ci/pwsh.sh -File ci/pester-planted.ps1 -Run latest
#>
param(
    [Parameter(Mandatory)] [string] $Run
)
$ErrorActionPreference = 'Stop'
Import-Module (Join-Path $PSScriptRoot (Join-Path '..' (Join-Path 'harness' (Join-Path 'pester' (Join-Path 'Corpus' 'Corpus.psd1')))))
$repro = 'attachthreadinput-ui-hang'
$found = Get-CorpusRun $Run -Repro $repro
$cells = @($found.Cells)
if ($cells.Count -eq 0) { throw "run '$Run' holds no $repro cell to plant a fact in" }

# The copy: this repro's cells of summary.json, each with its facts.json, under a run of its own.
$root = Join-Path 'build' (Join-Path 'planted' ([guid]::NewGuid().ToString('n').Substring(0, 12)))
$runDir = Join-Path $root (Join-Path 'artifacts' 'planted')
New-Item -ItemType Directory -Force -Path $runDir | Out-Null
$summary = Get-Content -Raw -LiteralPath (Join-Path $cells[0].RunDir 'summary.json') | ConvertFrom-Json
$kept = foreach ($c in @($summary.cells | Where-Object repro -eq $repro)) {
    $relative = "artifacts/planted/$($c.repro)/$($c.case)/$($c.variant)/$($c.subject -replace '[^A-Za-z0-9.-]', '_')/facts.json"
    $source = @($cells | Where-Object { $_.Case -eq $c.case -and $_.Variant -eq $c.variant -and $_.Subject -eq $c.subject })[0].FactsFile
    if ($source) {
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent (Join-Path $root $relative)) | Out-Null
        Copy-Item -LiteralPath $source -Destination (Join-Path $root $relative)
        $c.facts = $relative
    }
    $c.artifacts = $null
    $c
}
$summary.cells = @($kept)
$summary | ConvertTo-Json -Depth 20 | Set-Content -LiteralPath (Join-Path $runDir 'summary.json')

# The planted fact: the Win32 hang lasted a minute instead of the worker's 8 s idle.
$target = Join-Path $root "artifacts/planted/$repro/cpp/bug/wine/facts.json"
$facts = Get-Content -Raw -LiteralPath $target | ConvertFrom-Json
$facts.family.facts.blockMs = 60000
$facts | ConvertTo-Json -Depth 20 | Set-Content -LiteralPath $target

try {
    $config = New-PesterConfiguration
    $config.Run.Container = New-PesterContainer -Path (Join-Path 'repros' $repro) -Data @{ Run = (Resolve-Path $runDir).Path }
    $config.Run.PassThru = $true
    $config.Output.Verbosity = 'None'
    $result = Invoke-Pester -Configuration $config
    $failed = @($result.Failed)
    $names = ($failed | ForEach-Object ExpandedName) -join '; '
    if ($failed.Count -ne 1 -or $failed[0].ExpandedName -notlike 'Win32: SetFocus blocks*') {
        throw "planted: expected exactly the Win32 hang's It to fail, but $($failed.Count) failed ($names) and $(@($result.Passed).Count) passed"
    }
    $message = $failed[0].ErrorRecord[0].Exception.Message
    foreach ($want in 'Detail: SetFocus blocked', 'Artifacts: ', "Re-run: make run REPRO=$repro CASE=cpp VARIANT=bug SUBJECT=wine") {
        if (-not $message.Contains($want)) { throw "planted: the failure does not say '$want':`n$message" }
    }
    Write-Host "planted: blockMs 60000 fails '$names' with the cell's detail, artifacts and re-run line; $(@($result.Passed).Count) other Its pass"
}
finally {
    Remove-Item -Recurse -Force -LiteralPath $root
}
