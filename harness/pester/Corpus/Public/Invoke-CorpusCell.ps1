function Invoke-CorpusCell {
    <#
    .SYNOPSIS
        Runs one cell through `corpus run` and returns its result: outcome, detail, key facts, artifact paths and
        the line that runs it again.

    .DESCRIPTION
        Calls `corpus run --repro R --case C --variant V --subject S --run-id ID --keep` (the harness builds, contains,
        captures and judges; nothing of that is done here), then reads the run's summary.json and the cell's
        facts.json. The run keeps every artifact (--keep), so the dumps, stack snapshots, traces and time-travel
        output it names are there to read; they stay in artifacts/<run-id>/ until `make clean`. -Prune leaves that
        to corpus, which deletes the runs and captures of a cell whose outcome matched expected/.

        A cell whose outcome differs from expected/ is not an error here (corpus exits 1): the result says so in
        Outcome, Expected and Gate, and the Should operators Reproduce and BeClean assert on it. Bad input (corpus
        exits 2) or a run that wrote no summary is an error.

    .PARAMETER Repro
        The repro id (repros/<id>/).

    .PARAMETER Case
        The case name, as in the repro's repro.json.

    .PARAMETER Variant
        bug, fix or fix-<how>.

    .PARAMETER Subject
        A subject name (net10, mono, wine, roslyn:4.8.0) or a user's build (mono:/path/to/mono, coreclr:/dotnet/root).

    .PARAMETER Runs
        Runs of a statistics cell (`corpus run --runs`); the manifest's count when omitted.

    .PARAMETER Prune
        Runs without --keep: a cell whose outcome matched expected/ keeps only its facts (summary.json, facts.json),
        not its dumps and logs. For runs that only need the outcome and the numbers.

    .PARAMETER RunId
        The run's id (artifacts/<run-id>/). A fresh `pester-…` id when omitted, so no run is overwritten.

    .PARAMETER Root
        The corpus checkout. Defaults to the one this module is in, or $env:CORPUS_ROOT.

    .OUTPUTS
        Corpus.CellResult: Repro, Case, Variant, Subject, Outcome, Expected, Gate, Detail, Family, Evidence, Fixture, Facts, Captures,
        ArtifactDir, Dumps, StackSnapshots, Traces, TimeTravel, Rerun, RunId, RunDir, ExitCode, Output.

    .EXAMPLE
        $cell = Invoke-CorpusCell -Repro filemapping-leak -Case csharp -Variant bug -Subject net10
        $cell.Family.facts.shmemDeltaMB
        $cell | Should -Reproduce

    .EXAMPLE
        Get-CorpusCell -Repro binaryformatter-quadratic -Case deserialize -Subject mono | Invoke-CorpusCell -Verbose |
            Should -HaveFrame 'ObjectManager'

        Shows the harness's progress as it runs, then looks for ObjectManager in the captured stacks.
    #>
    [CmdletBinding()]
    [OutputType('Corpus.CellResult')]
    param(
        [Parameter(Mandatory, ValueFromPipelineByPropertyName)] [string] $Repro,
        [Parameter(Mandatory, ValueFromPipelineByPropertyName)] [string] $Case,
        [Parameter(Mandatory, ValueFromPipelineByPropertyName)] [string] $Variant,
        [Parameter(Mandatory, ValueFromPipelineByPropertyName)] [string] $Subject,
        [ValidateRange(1, 100000)] [int] $Runs,
        [switch] $Prune,
        [ValidatePattern('^[A-Za-z0-9._-]+$')] [string] $RunId,
        [string] $Root
    )
    begin {
        $corpus = Resolve-CorpusRoot $Root
    }
    process {
        $id = if ($RunId) { $RunId } else { 'pester-' + [guid]::NewGuid().ToString('N').Substring(0, 12) }
        $arguments = @('run', '--repro', $Repro, '--case', $Case, '--variant', $Variant, '--subject', $Subject,
                       '--run-id', $id)
        if (-not $Prune) { $arguments += '--keep' }
        if ($Runs) { $arguments += @('--runs', "$Runs") }
        $r = Invoke-CorpusTool -Corpus $corpus -Arguments $arguments
        $output = $r.Stdout + $r.Stderr
        if ($r.ExitCode -eq 2) {
            throw "corpus run exited 2 (bad input) for ${Repro}:$Case/$Variant/${Subject}: $($output -join [Environment]::NewLine)"
        }
        $runDir = Join-Path $corpus.Root artifacts $id
        $summary = Join-Path $runDir 'summary.json'
        if (-not (Test-Path -LiteralPath $summary -PathType Leaf)) {
            throw "corpus run exited $($r.ExitCode) without $summary`: $($output -join [Environment]::NewLine)"
        }
        $cells = @((Get-Content -Raw -LiteralPath $summary | ConvertFrom-Json).cells)
        if ($cells.Count -ne 1) {
            throw "$summary holds $($cells.Count) cells, not the one asked for (${Repro}:$Case/$Variant/$Subject)"
        }
        $result = ConvertTo-CorpusCellResult -Json $cells[0] -Root $corpus.Root -RunId $id -RunDir $runDir -Source $summary
        $result | Add-Member -NotePropertyName ExitCode -NotePropertyValue $r.ExitCode
        $result | Add-Member -NotePropertyName Output -NotePropertyValue $output
        $result
    }
}
