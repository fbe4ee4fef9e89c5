function ConvertTo-CorpusCellResult {
    # A cell of summary.json as a Corpus.CellResult, read from the one record of the cell, its facts.json (schema 2:
    # outcome, gate, family and evidence facts, runs, captures with their thread stacks and heap counts, fixture,
    # runtime; it stays when a cell's runs and captures are pruned). summary.json only lists the cells and names their
    # facts.json. Paths are made absolute, and the captures still on disk sorted into dumps, stack snapshots, traces
    # and time-travel output.
    param([Parameter(Mandatory)] $Json, [Parameter(Mandatory)] [string] $Root, [string] $RunId, [string] $RunDir,
          [string] $Source = 'summary.json', [int] $Index = 0)
    foreach ($field in 'repro', 'case', 'variant', 'subject', 'facts') {
        if ($null -eq $Json.PSObject.Properties[$field]) { throw "${Source}: field 'cells[$Index].$field': missing" }
    }
    # The other fields are read leniently: a summary from an older or newer harness still reads.
    Set-StrictMode -Off

    $factsFile = Join-Path $Root $Json.facts
    if (-not (Test-Path -LiteralPath $factsFile -PathType Leaf)) {
        throw "${Source}: field 'cells[$Index].facts': $factsFile is missing"
    }
    $facts = Get-Content -Raw -LiteralPath $factsFile | ConvertFrom-Json
    if ($facts.schema -ne 2) { throw "${factsFile}: field 'schema': this module reads schema 2, found $($facts.schema)" }
    # Kept: the cell's runs and captures are on disk; facts.json's artifacts is null once they are pruned, and the
    # folder then keeps only facts.json and rerun.txt.
    $kept = [bool] ($facts.artifacts -and (Test-Path -LiteralPath (Join-Path $Root $facts.artifacts.dir) -PathType Container))
    $artifactDir = if ($facts.artifacts) { Join-Path $Root $facts.artifacts.dir } else { Split-Path -Parent $factsFile }

    $captures = foreach ($c in @($facts.captures)) {
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
        $threads = @($c.threads | Where-Object { $_ })
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
        Repro          = $facts.cell.repro
        Case           = $facts.cell.case
        Variant        = $facts.cell.variant
        Subject        = $facts.cell.subject
        Outcome        = $facts.outcome
        Expected       = $facts.expected
        ExpectedReason = $facts.expectedReason
        Gate           = $facts.gate
        GateMessage    = $facts.gateMessage
        Detail         = $facts.detail
        KeyFigures     = @($facts.keyFigures | Where-Object { $_ })
        Seconds        = $facts.seconds
        Runtime        = $facts.runtime
        Fixture        = $facts.fixture
        Family         = $facts.family
        Evidence       = @($facts.evidence | Where-Object { $_ })
        Facts          = $facts
        FactsFile      = $factsFile
        Runs           = @($facts.runs | Where-Object { $_ })
        Captures       = $captures
        CaptureErrors  = @($facts.captureErrors | Where-Object { $_ })
        ArtifactDir    = $artifactDir
        ArtifactsKept  = $kept
        Dumps          = & $existing 'dump'
        StackSnapshots = $stackFiles
        Traces         = & $existing 'trace'
        TimeTravel     = & $existing 'time-travel'
        Rerun          = $facts.rerun
        RunId          = $RunId
        RunDir         = $RunDir
    }
    # For an It's -Because: a failed fact then says what the cell showed, where its artifacts are, how to run it again.
    $result | Add-Member -NotePropertyName Context -NotePropertyValue "`n$(Format-CorpusCellFailure $result)"
    $result
}
