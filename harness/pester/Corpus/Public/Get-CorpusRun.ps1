function Get-CorpusRun {
    <#
    .SYNOPSIS
        Reads a finished run: its summary.json, and each cell's facts.json (family and evidence facts, runs, captures).

    .DESCRIPTION
        Reads artifacts/<run-id>/summary.json, which lists every cell and names its facts.json, and reads each cell
        from its facts.json, which stays also for cells whose runs and captures were deleted (a run without --keep
        deletes them for cells that matched expected/). Where a cell's folder was kept, its dumps, stack snapshots,
        traces and time-travel output are listed. Runs nothing.

    .PARAMETER Path
        The run: a run id (looked up under artifacts/), a run folder, or a summary.json. `latest` (the default) is
        the last run.

    .PARAMETER Repro
        Keeps only the cells of these repros.

    .PARAMETER Case
        Keeps only the cells of these cases.

    .PARAMETER Variant
        Keeps only the cells of these variants.

    .PARAMETER Subject
        Keeps only the cells of these subjects.

    .PARAMETER Root
        The corpus checkout. Defaults to the one this module is in, or $env:CORPUS_ROOT.

    .OUTPUTS
        Corpus.Run: RunId, Path, Passed, Seconds, InputErrors, Cells (Corpus.CellResult, as Invoke-CorpusCell returns).

    .EXAMPLE
        (Get-CorpusRun latest).Cells | Where-Object Gate -ne 'pass' | Format-Table Repro, Case, Variant, Subject, Outcome, Expected

    .EXAMPLE
        $run = Get-CorpusRun artifacts/gate-20261124-101500-4242 -Repro filemapping-leak -Subject net10
        $run.Cells | Where-Object Variant -eq 'fix' | Should -BeClean
    #>
    [CmdletBinding()]
    [OutputType('Corpus.Run')]
    param(
        [Parameter(Position = 0)] [string] $Path = 'latest',
        [string[]] $Repro,
        [string[]] $Case,
        [string[]] $Variant,
        [string[]] $Subject,
        [string] $Root
    )
    $rootDir = if ($Root) { (Resolve-Path -LiteralPath $Root -ErrorAction Stop).Path } else { $script:DefaultRoot }
    $summary = $null
    foreach ($candidate in @($Path, (Join-Path $Path 'summary.json'), (Join-Path $rootDir artifacts $Path summary.json))) {
        if ((Split-Path -Leaf $candidate) -eq 'summary.json' -and (Test-Path -LiteralPath $candidate -PathType Leaf)) {
            $summary = (Resolve-Path -LiteralPath $candidate).Path
            break
        }
    }
    if (-not $summary) {
        throw "no finished run at '$Path': neither it, $Path/summary.json nor artifacts/$Path/summary.json under $rootDir exists"
    }
    $doc = Get-Content -Raw -LiteralPath $summary | ConvertFrom-Json
    if ($doc.schema -ne 2) {
        throw "${summary}: field 'schema': this module reads schema 2, found $($doc.schema)"
    }
    $runDir = Split-Path -Parent $summary
    # summary.json names files relative to the checkout that wrote it (artifacts/<id>/…): a run of another checkout
    # is read against that checkout, not this module's.
    if (-not $Root -and (Split-Path -Leaf (Split-Path -Parent $runDir)) -eq 'artifacts') {
        $rootDir = Split-Path -Parent (Split-Path -Parent $runDir)
    }
    $index = -1
    $cells = foreach ($c in @($doc.cells)) {
        $index++
        if ($Repro -and $c.repro -notin $Repro) { continue }
        if ($Case -and $c.case -notin $Case) { continue }
        if ($Variant -and $c.variant -notin $Variant) { continue }
        if ($Subject -and $c.subject -notin $Subject) { continue }
        ConvertTo-CorpusCellResult -Json $c -Root $rootDir -RunId $doc.runId -RunDir $runDir -Source $summary -Index $index
    }
    [pscustomobject]@{
        PSTypeName  = 'Corpus.Run'
        RunId       = $doc.runId
        Path        = $runDir
        Passed      = $doc.passed
        Seconds     = $doc.seconds
        InputErrors = @($doc.inputErrors)
        Cells       = @($cells)
    }
}
