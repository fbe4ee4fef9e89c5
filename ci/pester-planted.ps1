<#
.SYNOPSIS
    The Pester layer must be able to fail: a copy of a finished run's cells of one repro with one fact planted wrong
    must fail exactly the It that reads it, with the cell's detail, artifacts and re-run line in the message. Exits
    non-zero when it does not.
.DESCRIPTION
    Over the Linux harness's run (make test): the Win32 hang of attachthreadinput-ui-hang on wine lasts a minute instead
    of the worker's 8 s idle. With -Windows, over the Windows harness's run (corpus winsmoke, under Wine): the
    filemapping-leak win32 bug cell on windows holds 3 sections instead of 8.
.EXAMPLE
    ci/pwsh.sh -File ci/pester-planted.ps1 -Run latest
.EXAMPLE
    harness/wine/pwsh.sh run -File ci/pester-planted.ps1 -Run winsmoke-20261125-083146-23197-windows -Windows
#>
param(
    [Parameter(Mandatory)] [string] $Run,
    [switch] $Windows
)
$ErrorActionPreference = 'Stop'
Import-Module (Join-Path $PSScriptRoot .. harness pester Corpus Corpus.psd1)
$plan = if ($Windows) {
    @{ Repro = 'filemapping-leak'; Cell = 'win32/bug/windows'; Fact = 'heldObjects'; Value = 3
       It = 'the process holds the 8 page-file sections by handle*'; Detail = 'Detail: the memory belongs to no process'
       Rerun = 'Re-run: make run REPRO=filemapping-leak CASE=win32 VARIANT=bug SUBJECT=windows' }
}
else {
    @{ Repro = 'attachthreadinput-ui-hang'; Cell = 'cpp/bug/wine'; Fact = 'blockMs'; Value = 60000
       It = 'Win32: SetFocus blocks*'; Detail = 'Detail: SetFocus blocked'
       Rerun = 'Re-run: make run REPRO=attachthreadinput-ui-hang CASE=cpp VARIANT=bug SUBJECT=wine' }
}
$repro = $plan.Repro
$found = Get-CorpusRun $Run -Repro $repro
$cells = @($found.Cells)
if ($cells.Count -eq 0) { throw "run '$Run' holds no $repro cell to plant a fact in" }

# The copy: this repro's cells of summary.json, each with its facts.json, under a run of its own.
$root = Join-Path build planted ([guid]::NewGuid().ToString('n').Substring(0, 12))
$runDir = Join-Path $root artifacts planted
New-Item -ItemType Directory -Force -Path $runDir | Out-Null
$summary = Get-Content -Raw -LiteralPath (Join-Path $cells[0].RunDir 'summary.json') | ConvertFrom-Json
$kept = foreach ($c in @($summary.cells | Where-Object repro -eq $repro)) {
    $relative = "artifacts/planted/$($c.repro)/$($c.case)/$($c.variant)/$($c.subject -replace '[^A-Za-z0-9.-]', '_')/facts.json"
    $source = @($cells | Where-Object { $_.Case -eq $c.case -and $_.Variant -eq $c.variant -and $_.Subject -eq $c.subject })[0].FactsFile
    if ($source) {
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent (Join-Path $root $relative)) | Out-Null
        # The copy has the records only, as a pruned cell does.
        $copy = Get-Content -Raw -LiteralPath $source | ConvertFrom-Json
        $copy.artifacts = $null
        $copy | ConvertTo-Json -Depth 20 | Set-Content -LiteralPath (Join-Path $root $relative)
        $c.facts = $relative
    }
    $c.artifacts = $null
    $c
}
$summary.cells = @($kept)
$summary | ConvertTo-Json -Depth 20 | Set-Content -LiteralPath (Join-Path $runDir 'summary.json')

# The planted fact, in the family's facts of the plan's cell.
$target = Join-Path $root "artifacts/planted/$repro/$($plan.Cell)/facts.json"
$facts = Get-Content -Raw -LiteralPath $target | ConvertFrom-Json
$facts.family.facts.($plan.Fact) = $plan.Value
$facts | ConvertTo-Json -Depth 20 | Set-Content -LiteralPath $target

try {
    $config = New-PesterConfiguration
    $config.Run.Container = New-PesterContainer -Path (Join-Path 'repros' $repro) -Data @{ Run = (Resolve-Path $runDir).Path }
    $config.Run.PassThru = $true
    $config.Output.Verbosity = 'None'
    $result = Invoke-Pester -Configuration $config
    $failed = @($result.Failed)
    $names = ($failed | ForEach-Object ExpandedName) -join '; '
    if ($failed.Count -ne 1 -or $failed[0].ExpandedName -notlike $plan.It) {
        throw "planted: expected exactly the It '$($plan.It)' to fail, but $($failed.Count) failed ($names) and $(@($result.Passed).Count) passed"
    }
    $message = $failed[0].ErrorRecord[0].Exception.Message
    foreach ($want in $plan.Detail, 'Artifacts: ', $plan.Rerun) {
        if (-not $message.Contains($want)) { throw "planted: the failure does not say '$want':`n$message" }
    }
    Write-Host "planted: $($plan.Fact) $($plan.Value) fails '$names' with the cell's detail, artifacts and re-run line; $(@($result.Passed).Count) other Its pass"
}
finally {
    # Windows (and Wine) may report a folder "not empty" while a file in it is still being deleted: try again briefly.
    for ($try = 1; ; $try++) {
        try { Remove-Item -Recurse -Force -LiteralPath $root -ErrorAction Stop; break }
        catch { if ($try -ge 10) { throw }; Start-Sleep -Milliseconds 200 }
    }
}
