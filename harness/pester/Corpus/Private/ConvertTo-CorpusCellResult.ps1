function ConvertTo-CorpusCellResult {
    # A cell of summary.json (the shape of cell.json) as a Corpus.CellResult: paths made absolute, captures sorted
    # into dumps, stack snapshots, traces and time-travel output, and the cell's facts.json read when it was kept.
    param([Parameter(Mandatory)] $Json, [Parameter(Mandatory)] [string] $Root, [string] $RunId, [string] $RunDir,
          [string] $Source = 'summary.json', [int] $Index = 0)
    foreach ($field in 'repro', 'case', 'variant', 'subject', 'outcome') {
        if ($null -eq $Json.PSObject.Properties[$field]) { throw "${Source}: field 'cells[$Index].$field': missing" }
    }
    # The other fields are read leniently: a summary from an older or newer harness still reads.
    Set-StrictMode -Off

    $artifactDir = $null
    if ($Json.artifacts) { $artifactDir = Join-Path $Root $Json.artifacts }
    $kept = [bool] ($artifactDir -and (Test-Path -LiteralPath $artifactDir -PathType Container))

    $captures = foreach ($c in @($Json.captures)) {
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
        $stacks = $null
        if ($kind -eq 'stacks') { $stacks = $path }
        elseif ($c.backend -eq 'createdump') { $stacks = [regex]::Replace($path, '\.core$', '.facts.json') }
        elseif ($c.backend -eq 'winedbg') { $stacks = [regex]::Replace($path, '\.mdmp$', '.threads.txt') }
        [pscustomobject]@{
            PSTypeName = 'Corpus.Capture'
            Backend    = $c.backend
            Kind       = $kind
            Run        = $c.run
            Path       = $path
            StackFile  = $stacks
            Exists     = Test-Path -LiteralPath $path -PathType Leaf
            Bytes      = $c.bytes
            Seconds    = $c.seconds
            AtSeconds  = $c.atSeconds
            Threads    = $c.threads
            HeapTypes  = $c.heapTypes
            Note       = $c.note
        }
    }
    $captures = @($captures)
    $existing = { param($kind) @($captures | Where-Object { $_.Kind -eq $kind -and $_.Exists } | ForEach-Object Path) }
    $stackFiles = @($captures | Where-Object { $_.StackFile -and (Test-Path -LiteralPath $_.StackFile -PathType Leaf) } |
                    ForEach-Object StackFile)

    $facts = $null
    if ($kept -and (Test-Path -LiteralPath (Join-Path $artifactDir 'facts.json') -PathType Leaf)) {
        $facts = Get-Content -Raw -LiteralPath (Join-Path $artifactDir 'facts.json') | ConvertFrom-Json
    }

    [pscustomobject]@{
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
        Seconds        = $Json.seconds
        Metrics        = $Json.metrics
        Facts          = $facts
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
}
