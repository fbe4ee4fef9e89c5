function ShouldBeClean {
    <#
    .SYNOPSIS
        Should -BeClean: the cell's outcome is `clean` (it ran within budget and showed no signature).
    .EXAMPLE
        Invoke-CorpusCell -Repro filemapping-leak -Case csharp -Variant fix -Subject net10 | Should -BeClean
    #>
    param($ActualValue, [switch] $Negate, [string] $Because)
    Test-CorpusOutcome -Cell $ActualValue -Outcome 'clean' -Negate:$Negate -Because $Because
}
