#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/roslyn-nested-attribute-blowup.md, one It each, asserted over the harness's cells' facts.

.DESCRIPTION
    Runs the cells through `corpus run`, or, with -Data @{ Run = '<run>' }, reads them from a finished run without
    running anything: `make test` asserts this way over the gate's run.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/roslyn-nested-attribute-blowup -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe 'roslyn-nested-attribute-blowup' -Tag 'Scenario' {
    BeforeAll {
        $blowing = foreach ($version in '4.3.1', '4.5.0', '4.8.0') {
            Get-CorpusCellResult -Repro roslyn-nested-attribute-blowup -Case attribute -Variant bug -Subject "roslyn:$version" -Run $Run
        }
        $fixed = foreach ($version in '4.11.0', '4.14.0', '5.0.0', '5.9.0', '5.12.0') {
            Get-CorpusCellResult -Repro roslyn-nested-attribute-blowup -Case attribute -Variant bug -Subject "roslyn:$version" -Run $Run
        }
    }

    It 'parse time multiplies per nesting level: a factor of at least 1.3 on 4.3.1, 4.5.0 and 4.8.0' {
        foreach ($cell in $blowing) {
            $cell | Should -Reproduce
            $cell.Family.facts.shape | Should -Be 'exponential'
            $cell.Family.facts.slope | Should -BeGreaterOrEqual 1.3 -Because $cell.Context
        }
    }

    It 'the deepest nesting runs into the 10 s budget and is killed' {
        foreach ($cell in $blowing) {
            $cell.Family.facts.killedAt | Should -Not -BeNullOrEmpty -Because $cell.Context
            $cell.Family.facts.killedBy | Should -Match 'timeout'
        }
    }

    It 'the dump''s parser thread is in ParseAttributeDeclaration or ParseCollectionExpression' {
        foreach ($cell in $blowing) {
            $stacks = $cell.Evidence | Where-Object key -eq 'stacks'
            $stacks.status | Should -Be 'holds'
            # The frame that matched, at any depth of the thread (its top frames may be in the syntax cache below it).
            $stacks.facts.matched | Should -Match 'LanguageParser\.Parse(AttributeDeclaration|Attribute|AttributeArgument|CollectionExpression|Expression)'
        }
    }

    It 'the CPU trace of the deepest nesting that finished puts most of the parsing thread''s samples in ParseAttributeDeclaration or ParseCollectionExpression' {
        foreach ($cell in $blowing) {
            $trace = $cell.Evidence | Where-Object key -eq 'trace'
            $trace.status | Should -Be 'holds' -Because $cell.Context
            $trace.facts.shares[0].judged | Should -Be 'min'
            $trace.facts.shares[0].thread | Should -Match '^Thread \(\d+\)$' -Because 'the share is of the main thread alone'
            $trace.facts.shares[0].share | Should -BeGreaterOrEqual 0.5 -Because $cell.Context
            @($cell.Facts.traces)[0].backend | Should -Be 'dotnet-trace'
            Join-Path $PSScriptRoot '..' '..' @($cell.Facts.traces)[0].flameGraph | Should -Exist
        }
    }

    It 'on 4.11.0, the first fixed compiler, the same trace has the parser under half of the samples' {
        $first = $fixed[0]
        $first.Subject | Should -Be 'roslyn:4.11.0'
        $trace = $first.Evidence | Where-Object key -eq 'trace'
        $trace.status | Should -Be 'holds' -Because $first.Context
        $trace.facts.shares[0].judged | Should -Be 'cleanMax'
        $trace.facts.shares[0].share | Should -BeLessThan 0.5 -Because $first.Context
    }

    It 'the fixed compilers parse every depth at once: 4.11.0, 4.14.0, 5.0.0, 5.9.0 and 5.12.0 are flat' {
        foreach ($cell in $fixed) {
            $cell | Should -BeClean
            $cell.Family.facts.killedAt | Should -BeNullOrEmpty
            ($cell.Family.facts.points | ForEach-Object { $_[1] } | Measure-Object -Maximum).Maximum | Should -BeLessThan 1
        }
    }
}
