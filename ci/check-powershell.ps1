<#
.SYNOPSIS
    Syntax check of PowerShell files with PowerShell's own parser: every parse error is reported as file:line:column
    with the parser's error id, and the exit code is 1 when any file has one.
.EXAMPLE
    ci/pwsh.sh -File ci/check-powershell.ps1 harness/pester/Corpus.Tests.ps1
#>
param(
    [Parameter(Mandatory, ValueFromRemainingArguments)]
    [string[]] $Path
)

$bad = 0
foreach ($file in $Path) {
    if (-not (Test-Path -LiteralPath $file -PathType Leaf)) {
        [Console]::Error.WriteLine("${file}: no such file")
        $bad++
        continue
    }
    $tokens = $null
    $errors = $null
    $ast = [System.Management.Automation.Language.Parser]::ParseFile((Resolve-Path -LiteralPath $file).Path, [ref] $tokens, [ref] $errors)
    if ($errors.Count -gt 0) {
        $bad++
        foreach ($e in $errors) {
            $p = $e.Extent.StartScriptPosition
            [Console]::Error.WriteLine("${file}:$($p.LineNumber):$($p.ColumnNumber): $($e.ErrorId): $($e.Message)")
        }
    }
    else {
        Write-Output "${file}: parses ($($tokens.Count) tokens)"
    }
}
exit ([int]($bad -gt 0))
