function Format-CorpusCellFailure {
    # The tail of every failure message: what the cell showed, where its artifacts are, and how to run it again.
    param([Parameter(Mandatory)] $Cell)
    $artifacts = if ($Cell.ArtifactsKept) { $Cell.ArtifactDir }
                 elseif ($Cell.ArtifactDir) { "$($Cell.ArtifactDir) (runs and captures deleted: its outcome matched expected/; run with --keep)" }
                 else { '(none)' }
    "Detail: $($Cell.Detail)`nArtifacts: $artifacts`nRe-run: $($Cell.Rerun)"
}
