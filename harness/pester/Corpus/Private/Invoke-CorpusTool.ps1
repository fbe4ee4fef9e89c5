function Invoke-CorpusTool {
    # One `corpus` command; its stdout and stderr lines apart, and its exit code. Each line also goes to the verbose
    # stream as it comes, so -Verbose shows a long cell's progress.
    param([Parameter(Mandatory)] $Corpus, [Parameter(Mandatory)] [string[]] $Arguments)
    $stdout = [System.Collections.Generic.List[string]]::new()
    $stderr = [System.Collections.Generic.List[string]]::new()
    & dotnet $Corpus.Dll @Arguments --root $Corpus.Root 2>&1 | ForEach-Object {
        if ($_ -is [System.Management.Automation.ErrorRecord]) { $stderr.Add($_.ToString()) } else { $stdout.Add([string] $_) }
        Write-Verbose ([string] $_)
    }
    [pscustomobject]@{ ExitCode = $LASTEXITCODE; Stdout = $stdout.ToArray(); Stderr = $stderr.ToArray() }
}
