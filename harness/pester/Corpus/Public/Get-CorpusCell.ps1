function Get-CorpusCell {
    <#
    .SYNOPSIS
        Lists the cells `corpus run` would run, each with its expected outcome, without building or running anything.

    .DESCRIPTION
        Wraps `corpus list --json`: one object per cell (repro, case, variant, subject) with the outcome expected/
        records for it (null for a user's subject), the reason, the tags and the `corpus run` arguments that run it
        alone. The filters are those of `corpus run`. Pipe the cells into Invoke-CorpusCell to run them.

    .PARAMETER Repro
        Repro ids (repros/<id>/), as `corpus run --repro`. All repros when omitted.

    .PARAMETER Case
        Case names, as `corpus run --case`.

    .PARAMETER Variant
        Variants (bug, fix, fix-<how>), as `corpus run --variant`.

    .PARAMETER Subject
        Subjects (net10, mono, wine, roslyn:4.8.0, mono:/path/to/mono, ...), as `corpus run --subject`. Each repro's
        default subjects when omitted.

    .PARAMETER ExcludeTag
        Leaves out cells with these tags, as `corpus run --exclude-tag`.

    .PARAMETER Root
        The corpus checkout. Defaults to the one this module is in, or $env:CORPUS_ROOT.

    .OUTPUTS
        Corpus.ListedCell: Repro, Case, Variant, Subject, Expected, Reason, Tags, Arguments.

    .EXAMPLE
        Get-CorpusCell -Repro filemapping-leak -Subject net10

        The filemapping-leak cells on .NET 10 with their expected outcomes.

    .EXAMPLE
        Get-CorpusCell -Repro ngen-imagelist-corruption -Subject wine | Invoke-CorpusCell

        Runs the repro's Wine cells one by one.
    #>
    [CmdletBinding()]
    [OutputType('Corpus.ListedCell')]
    param(
        [string[]] $Repro,
        [string[]] $Case,
        [string[]] $Variant,
        [string[]] $Subject,
        [string[]] $ExcludeTag,
        [string] $Root
    )
    $corpus = Resolve-CorpusRoot $Root
    $arguments = @('list', '--json')
    if ($Repro) { $arguments += @('--repro', ($Repro -join ',')) }
    if ($Case) { $arguments += @('--case', ($Case -join ',')) }
    if ($Variant) { $arguments += @('--variant', ($Variant -join ',')) }
    if ($Subject) { $arguments += @('--subject', ($Subject -join ',')) }
    if ($ExcludeTag) { $arguments += @('--exclude-tag', ($ExcludeTag -join ',')) }
    $r = Invoke-CorpusTool -Corpus $corpus -Arguments $arguments
    if ($r.ExitCode -ne 0) {
        throw "corpus list exited $($r.ExitCode): $(($r.Stderr + $r.Stdout) -join [Environment]::NewLine)"
    }
    $list = ($r.Stdout -join "`n") | ConvertFrom-Json
    foreach ($cell in $list.cells) {
        [pscustomobject]@{
            PSTypeName = 'Corpus.ListedCell'
            Repro      = $cell.repro
            Case       = $cell.case
            Variant    = $cell.variant
            Subject    = $cell.subject
            Expected   = $cell.expected
            Reason     = $cell.reason
            Tags       = @($cell.tags)
            Arguments  = @($cell.args)
        }
    }
}
