function Get-CorpusCellResult {
    <#
    .SYNOPSIS
        The result of one cell: read from a finished run when -Run is given, otherwise by running the cell now.

    .DESCRIPTION
        The seam that lets a repro's Tests file assert either over a run that already happened (the gate's, so
        `make test` runs no cell twice) or over a fresh run of the cell. With -Run it is Get-CorpusRun narrowed to the
        one cell, and an error when the run does not hold it; without, it is Invoke-CorpusCell (artifacts kept).

    .PARAMETER Repro
        The repro id.

    .PARAMETER Case
        The case name.

    .PARAMETER Variant
        bug, fix or fix-<how>.

    .PARAMETER Subject
        The subject name.

    .PARAMETER Run
        A finished run (run id, run folder or summary.json, as Get-CorpusRun takes). Empty: run the cell now.

    .PARAMETER Root
        The corpus checkout. Defaults to the one this module is in, or $env:CORPUS_ROOT.

    .OUTPUTS
        Corpus.CellResult

    .EXAMPLE
        $bug = Get-CorpusCellResult -Repro filemapping-leak -Case csharp -Variant bug -Subject net10 -Run latest
        $bug | Should -Reproduce
    #>
    [CmdletBinding()]
    [OutputType('Corpus.CellResult')]
    param(
        [Parameter(Mandatory)] [string] $Repro,
        [Parameter(Mandatory)] [string] $Case,
        [Parameter(Mandatory)] [string] $Variant,
        [Parameter(Mandatory)] [string] $Subject,
        [string] $Run,
        [string] $Root
    )
    $rootArgs = @{}
    if ($Root) { $rootArgs.Root = $Root }
    if (-not $Run) {
        return Invoke-CorpusCell -Repro $Repro -Case $Case -Variant $Variant -Subject $Subject @rootArgs
    }
    $found = Get-CorpusRun $Run -Repro $Repro -Case $Case -Variant $Variant -Subject $Subject @rootArgs
    if ($found.Cells.Count -ne 1) {
        throw "run $($found.RunId) ($($found.Path)) holds no cell ${Repro}:$Case/$Variant/$Subject"
    }
    $found.Cells[0]
}
