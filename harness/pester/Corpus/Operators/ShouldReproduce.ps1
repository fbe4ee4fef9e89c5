function ShouldReproduce {
    <#
    .SYNOPSIS
        Should -Reproduce: the cell's outcome is `reproduced` (its signature matched).
    .EXAMPLE
        Invoke-CorpusCell -Repro filemapping-leak -Case csharp -Variant bug -Subject net10 | Should -Reproduce
    #>
    param($ActualValue, [switch] $Negate, [string] $Because)
    Test-CorpusOutcome -Cell $ActualValue -Outcome 'reproduced' -Negate:$Negate -Because $Because
}
