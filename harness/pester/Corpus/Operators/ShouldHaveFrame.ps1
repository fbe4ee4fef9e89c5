function ShouldHaveFrame {
    <#
    .SYNOPSIS
        Should -HaveFrame 'Name': a stack captured in the cell holds a frame containing Name (case-sensitive).
    .DESCRIPTION
        Reads the threads of the cell's captures from its facts.json, which keeps them after a run without --keep
        pruned the capture files; without facts.json (an older harness), the stack snapshots on disk (dump-facts'
        threads of a createdump core, winedbg's and Mono's text backtraces), which Invoke-CorpusCell always keeps.
    .EXAMPLE
        Invoke-CorpusCell -Repro binaryformatter-quadratic -Case deserialize -Variant bug -Subject mono |
            Should -HaveFrame 'ObjectManager'
    #>
    param($ActualValue, [switch] $Negate, $ExpectedValue, [string] $Because)
    $cell = $ActualValue
    if ($null -eq $cell -or $null -eq $cell.PSObject.Properties['StackSnapshots']) {
        return [pscustomobject]@{ Succeeded = $false; FailureMessage = "Expected a cell result (Invoke-CorpusCell, Get-CorpusRun), but got '$ActualValue'." }
    }
    $name = Get-CorpusCellName $cell
    $because = if ($Because) { " because $Because" } else { '' }
    $frames = @(Get-CorpusFrame $cell)
    $hits = @($frames | Where-Object { $_.Frame.Contains([string] $ExpectedValue) })
    $succeeded = if ($Negate) { $hits.Count -eq 0 } else { $hits.Count -gt 0 }
    $message = $null
    if (-not $succeeded) {
        $tail = Format-CorpusCellFailure $cell
        if ($Negate) {
            $first = $hits[0]
            $message = "Expected no captured stack of $name to hold a frame '$ExpectedValue'$because, but $($hits.Count) frames do, first '$($first.Frame)' in $($first.File).`n$tail"
        }
        elseif ($frames.Count -eq 0) {
            $message = "Expected a captured stack of $name to hold a frame '$ExpectedValue'$because, but the cell has no stack snapshot to read ($(@($cell.Captures).Count) captures, capture errors: $(@($cell.CaptureErrors) -join '; ')).`n$tail"
        }
        else {
            $top = @($frames | Select-Object -First 8 | ForEach-Object Frame) -join ' | '
            $message = "Expected a captured stack of $name to hold a frame '$ExpectedValue'$because, but none of $($frames.Count) frames in $(@($frames | ForEach-Object File | Select-Object -Unique).Count) stack snapshots does; the first: $top.`n$tail"
        }
    }
    [pscustomobject]@{ Succeeded = $succeeded; FailureMessage = $message }
}
