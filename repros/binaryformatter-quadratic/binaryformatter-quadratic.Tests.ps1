#Requires -Modules @{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' }
<#
.SYNOPSIS
    The claims of docs/labs/binaryformatter-quadratic.md, one It each, asserted over the harness's cells' facts.

.DESCRIPTION
    Runs the cells through `corpus run`, or, with -Data @{ Run = '<run>' }, reads them from a finished run without
    running anything: `make test` asserts this way over the gate's run.

.EXAMPLE
    ci/pwsh.sh -Command "Invoke-Pester repros/binaryformatter-quadratic -Output Detailed"
#>
param(
    [string] $Run = ''
)

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot .. .. harness pester Corpus Corpus.psd1)
}

Describe 'binaryformatter-quadratic' -Tag 'Scenario' {
    Context 'deserialize: ObjectManager keeps 4096 buckets' {
        BeforeAll {
            $mono = Get-CorpusCellResult -Repro binaryformatter-quadratic -Case deserialize -Variant bug -Subject mono -Run $Run
            $net10 = Get-CorpusCellResult -Repro binaryformatter-quadratic -Case deserialize -Variant bug -Subject net10 -Run $Run
            $net8 = Get-CorpusCellResult -Repro binaryformatter-quadratic -Case deserialize -Variant bug -Subject net8 -Run $Run
        }

        It 'on Mono deserialize time grows as n squared: exponent at least 1.5 over the sizes' {
            $mono | Should -Reproduce
            $mono.Family.facts.shape | Should -Be 'power'
            $mono.Family.facts.slope | Should -BeGreaterOrEqual 1.5 -Because $mono.Context
            $mono.Family.facts.r2 | Should -BeGreaterOrEqual 0.8
        }

        It 'on .NET 10 and .NET 8 it grows linearly: exponent at most 1.3' {
            foreach ($cell in $net10, $net8) {
                $cell | Should -BeClean
                $cell.Family.facts.slope | Should -BeLessOrEqual 1.3 -Because $cell.Context
            }
        }

        It 'each point is the geometric mean of its size''s timed runs as measured; each run''s serialize only narrows their scatter' {
            foreach ($cell in $mono, $net10, $net8) {
                $facts = $cell.Family.facts
                $facts.calibration | Should -Be 'serialize_cpu_s'
                $facts.calibrationWeight | Should -BeGreaterOrEqual 0 -Because $cell.Context
                $facts.calibrationWeight | Should -BeLessOrEqual 1 -Because $cell.Context
                $facts.decision.method | Should -Match 'scaled by \(the geometric mean serialize_cpu_s of its size over its own\)\^'
                $timed = @($cell.Facts.runs | Where-Object { $_.label -match '^n\d+-rep\d+$' })
                foreach ($point in $facts.points) {
                    $logs = @($timed | Where-Object n -eq $point[0] | ForEach-Object { [math]::Log($_.metrics.deserialize_cpu_s) })
                    $logs.Count | Should -BeGreaterOrEqual 2 -Because "$($cell.Context), size $($point[0])"
                    $mean = [math]::Exp(($logs | Measure-Object -Average).Average)
                    [math]::Abs($point[1] / $mean - 1) | Should -BeLessOrEqual 1e-6 -Because "$($cell.Context), size $($point[0])"
                }
            }
        }

        It 'at 400K books Mono is many times slower than .NET 10' {
            $monoAt = ($mono.Family.facts.points | Select-Object -Last 1)[1]
            $netAt = ($net10.Family.facts.points | Select-Object -Last 1)[1]
            $monoAt / $netAt | Should -BeGreaterThan 5 -Because "Mono $monoAt s against .NET 10 $netAt s"
        }

        It 'Mono''s stack snapshots are in ObjectManager' {
            $mono | Should -HaveFrame 'System.Runtime.Serialization.ObjectManager'
            ($mono.Evidence | Where-Object key -eq 'stacks').status | Should -Be 'holds'
        }

        It 'Mono''s CPU trace puts most of the deserialize samples in ObjectManager (at least the bound, 70%), and draws it' {
            $trace = $mono.Evidence | Where-Object key -eq 'trace'
            $trace.status | Should -Be 'holds' -Because $mono.Context
            $share = $trace.facts.shares[0]
            $share.judged | Should -Be 'min'
            $share.samplesUnder | Should -BeGreaterThan 100 -Because 'a share of a handful of samples proves nothing'
            $share.share | Should -BeGreaterOrEqual 0.7 -Because $mono.Context
            $share.low | Should -BeGreaterOrEqual $share.min -Because 'the whole interval decides, not the point'
            $record = @($mono.Facts.traces)[0]
            $record.backend | Should -Be 'mono-log-profiler'
            $record.error | Should -BeNullOrEmpty
            Join-Path $PSScriptRoot '..' '..' $record.flameGraph | Should -Exist
        }

        It 'on .NET 10 and .NET 8 the CPU trace keeps ObjectManager under the bound (70%) of the deserialize samples' {
            foreach ($cell in $net10, $net8) {
                $trace = $cell.Evidence | Where-Object key -eq 'trace'
                $trace.status | Should -Be 'holds' -Because $cell.Context
                $trace.facts.shares[0].judged | Should -Be 'cleanMax'
                # Enough of Deserialize was sampled to judge a share: its weight, in ms of thread time. Not its count of
                # samples: dotnet-trace's profile is evented, a sample lasting until the stack changes (76 of them
                # covered 310 ms on an idle host).
                $trace.facts.shares[0].total | Should -BeGreaterThan 100 -Because $cell.Context
                $trace.facts.shares[0].share | Should -BeLessThan 0.7 -Because $cell.Context
                $trace.facts.shares[0].high | Should -BeLessThan $trace.facts.shares[0].cleanMax -Because 'the whole interval decides, not the point'
                @($cell.Facts.traces)[0].backend | Should -Be 'dotnet-trace'
            }
        }
    }

    Context 'idgen-limit: ObjectIDGenerator runs out of primes' {
        BeforeAll {
            $mono = Get-CorpusCellResult -Repro binaryformatter-quadratic -Case idgen-limit -Variant bug -Subject mono -Run $Run
            $net10 = Get-CorpusCellResult -Repro binaryformatter-quadratic -Case idgen-limit -Variant bug -Subject net10 -Run $Run
        }

        It 'Mono throws SerializationException from ObjectIDGenerator.Rehash' {
            $mono | Should -Reproduce
            $mono.Family.facts.matched | Should -Contain 'SerializationException'
            $mono.Family.facts.matched | Should -Contain 'ObjectIDGenerator.Rehash'
        }

        It '.NET 10 serializes the same graph' {
            $net10 | Should -BeClean
            $net10.Family.facts.status | Should -Be 'exit 0'
        }
    }
}
