function Resolve-CorpusRoot {
    # The corpus checkout to work in, and its built harness; a clear error when the harness is not built.
    param([string] $Root)
    if (-not $Root) { $Root = $script:DefaultRoot }
    $full = (Resolve-Path -LiteralPath $Root -ErrorAction Stop).Path
    $dll = Join-Path $full build harness corpus corpus.dll
    if (-not (Test-Path -LiteralPath $dll -PathType Leaf)) {
        throw "the harness is not built: no $dll (run 'make setup' in $full)"
    }
    [pscustomobject]@{ Root = $full; Dll = $dll }
}
