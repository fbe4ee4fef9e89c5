function ConvertTo-CorpusCellResult {
    # A cell of summary.json as a Corpus.CellResult: its facts.json read (schema 1: family, evidence, captures with
    # their thread stacks and heap counts; it stays when a cell's runs and captures are pruned), paths made absolute,
    # and the captures that are still on disk sorted into dumps, stack snapshots, traces and time-travel output.
    param([Parameter(Mandatory)] $Json, [Parameter(Mandatory)] [string] $Root, [string] $RunId, [string] $RunDir,
          [string] $Source = 'summary.json', [int] $Index = 0)
    foreach ($field in 'repro', 'case', 'variant', 'subject', 'outcome') {
        if ($null -eq $Json.PSObject.Properties[$field]) { throw "${Source}: field 'cells[$Index].$field': missing" }
    }
    # The other fields are read leniently: a summary from an older or newer harness still reads.
    Set-StrictMode -Off

    $artifactDir = $null
    if ($Json.artifacts) { $artifactDir = Join-Path $Root $Json.artifacts }

    $facts = $null
    $factsFile = if ($Json.facts) { Join-Path $Root $Json.facts } elseif ($artifactDir) { Join-Path $artifactDir 'facts.json' }
    if ($factsFile -and (Test-Path -LiteralPath $factsFile -PathType Leaf)) {
        $facts = Get-Content -Raw -LiteralPath $factsFile | ConvertFrom-Json
        if ($facts.schema -ne 1) { throw "${factsFile}: field 'schema': this module reads schema 1, found $($facts.schema)" }
        # A pruned cell's folder keeps facts.json, cell.json and rerun.txt.
        if (-not $artifactDir) { $artifactDir = Split-Path -Parent $factsFile }
    }
    # Kept: the cell's runs and captures are on disk. summary.json's artifacts is null once they are pruned.
    $kept = [bool] ($Json.artifacts -and (Test-Path -LiteralPath (Join-Path $Root $Json.artifacts) -PathType Container))

    $listed = if ($facts) { $facts.captures } else { $Json.captures }
    $captures = foreach ($c in @($listed)) {
        if ($null -eq $c) { continue }
        $path = Join-Path $Root $c.file
        $kind = switch -Regex ($c.backend) {
            '^(createdump|procdump|procdump\.exe|core)$' { 'dump' }
            '^winedbg$' { if ($path -like '*.mdmp') { 'dump' } else { 'stacks' } }
            '^mono-sigquit$' { 'stacks' }
            '^ring$' { 'trace' }
            '^(gdb record full|TTD\.exe)$' { 'time-travel' }
            default { 'other' }
        }
        # The thread stacks beside a dump: dump-facts' JSON of a createdump core, winedbg's backtraces of a minidump.
        $stackFile = $null
        if ($kind -eq 'stacks') { $stackFile = $path }
        elseif ($c.backend -eq 'createdump') { $stackFile = [regex]::Replace($path, '\.core$', '.facts.json') }
        elseif ($c.backend -eq 'winedbg') { $stackFile = [regex]::Replace($path, '\.mdmp$', '.threads.txt') }
        # facts.json carries the threads with their frames; summary.json only their count.
        $threads = if ($c.threads -is [array] -or $c.threads -is [pscustomobject]) { @($c.threads) } else { @() }
        [pscustomobject]@{
            PSTypeName = 'Corpus.Capture'
            Backend    = $c.backend
            Kind       = $kind
            Run        = $c.run
            Path       = $path
            StackFile  = $stackFile
            Exists     = Test-Path -LiteralPath $path -PathType Leaf
            Bytes      = $c.bytes
            Seconds    = $c.seconds
            AtSeconds  = $c.atSeconds
            Threads    = $threads
            Heap       = $c.heap
            Note       = $c.note
        }
    }
    $captures = @($captures)
    $existing = { param($kind) @($captures | Where-Object { $_.Kind -eq $kind -and $_.Exists } | ForEach-Object Path) }
    $stackFiles = @($captures | Where-Object { $_.StackFile -and (Test-Path -LiteralPath $_.StackFile -PathType Leaf) } |
                    ForEach-Object StackFile)

    $result = [pscustomobject]@{
        PSTypeName     = 'Corpus.CellResult'
        Repro          = $Json.repro
        Case           = $Json.case
        Variant        = $Json.variant
        Subject        = $Json.subject
        Outcome        = $Json.outcome
        Expected       = $Json.expected
        ExpectedReason = $Json.expectedReason
        Gate           = $Json.gate
        GateMessage    = $Json.gateMessage
        Detail         = $Json.detail
        KeyFigures     = if ($facts) { @($facts.keyFigures) } else { @($Json.keyFigures | Where-Object { $_ }) }
        Seconds        = $Json.seconds
        Metrics        = $Json.metrics
        Family         = if ($facts) { $facts.family } else { $null }
        Evidence       = if ($facts) { @($facts.evidence) } else { @() }
        Facts          = $facts
        FactsFile      = if ($facts) { $factsFile } else { $null }
        Runs           = @($Json.runs)
        Captures       = $captures
        CaptureErrors  = @($Json.captureErrors)
        ArtifactDir    = $artifactDir
        ArtifactsKept  = $kept
        Dumps          = & $existing 'dump'
        StackSnapshots = $stackFiles
        Traces         = & $existing 'trace'
        TimeTravel     = & $existing 'time-travel'
        Rerun          = $Json.rerun
        RunId          = $RunId
        RunDir         = $RunDir
    }
    # For an It's -Because: a failed fact then says what the cell showed, where its artifacts are, how to run it again.
    $result | Add-Member -NotePropertyName Context -NotePropertyValue "`n$(Format-CorpusCellFailure $result)"
    $result
}
