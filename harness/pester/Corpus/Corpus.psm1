# The Corpus module: one public function per file in Public/, helpers in Private/, the Should operators in Operators/.
# Only the functions listed in Corpus.psd1 are exported.
Set-StrictMode -Version 3.0

foreach ($folder in 'Private', 'Public', 'Operators') {
    foreach ($file in Get-ChildItem -Path (Join-Path $PSScriptRoot $folder) -Filter '*.ps1' -File) {
        . $file.FullName
    }
}

# The corpus checkout this module belongs to (harness/pester/Corpus is three levels down); $env:CORPUS_ROOT overrides.
$script:DefaultRoot = if ($env:CORPUS_ROOT) { $env:CORPUS_ROOT } else {
    (Resolve-Path (Join-Path $PSScriptRoot .. .. ..)).Path
}

# Pester keeps one table of operators per session: registering the same test again is a no-op.
Add-ShouldOperator -Name Reproduce -InternalName ShouldReproduce -Test ${function:ShouldReproduce}
Add-ShouldOperator -Name BeClean -InternalName ShouldBeClean -Test ${function:ShouldBeClean}
Add-ShouldOperator -Name HaveFrame -InternalName ShouldHaveFrame -Test ${function:ShouldHaveFrame}
