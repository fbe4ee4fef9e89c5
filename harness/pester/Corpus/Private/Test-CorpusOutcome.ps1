function Test-CorpusOutcome {
    # The Should result for "the cell's outcome is (not) <Outcome>", with the cell's detail, artifacts and re-run line.
    param($Cell, [string] $Outcome, [switch] $Negate, [string] $Because)
    if ($null -eq $Cell -or $null -eq $Cell.PSObject.Properties['Outcome'] -or $null -eq $Cell.PSObject.Properties['Rerun']) {
        return [pscustomobject]@{ Succeeded = $false; FailureMessage = "Expected a cell result (Invoke-CorpusCell, Get-CorpusRun), but got '$Cell'." }
    }
    $succeeded = ($Cell.Outcome -eq $Outcome) -xor [bool] $Negate
    $message = $null
    if (-not $succeeded) {
        $because = if ($Because) { " because $Because" } else { '' }
        $not = if ($Negate) { 'not ' } else { '' }
        $expected = if ($Cell.Expected) { "expected/ says $($Cell.Expected)" } else { 'no entry in expected/' }
        $message = "Expected $(Get-CorpusCellName $Cell) $not$Outcome$because, but it was $($Cell.Outcome) ($expected).`n$(Format-CorpusCellFailure $Cell)"
    }
    [pscustomobject]@{ Succeeded = $succeeded; FailureMessage = $message }
}
