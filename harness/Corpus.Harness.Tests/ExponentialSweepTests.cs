using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The complexity family's exponential shape on synthetic series: factor per level, and the verdict.</summary>
public class ExponentialSweepTests
{
    private static readonly ComplexitySpec Spec =
        new("parse_s", [8, 10, 12, 13, 14, 15, 16, 18, 20, 22], 1.4, 1.15, 0.8, 0, "levels", ComplexitySpec.Exponential, 0.1);
    private static readonly Budget Budget = new(10, 2048);

    private static List<(double N, double Seconds)> Series(IEnumerable<int> sizes, Func<int, double> time) =>
        sizes.Select(n => ((double)n, time(n))).ToList();

    [Theory]
    [InlineData(2.0)]
    [InlineData(1.5)]
    [InlineData(3.0)]
    public void ExactExponentialGivesItsFactor(double factor)
    {
        var points = Series([10, 12, 13, 14, 15], n => 1e-4 * Math.Pow(factor, n));
        Assert.Equal(factor, ComplexityFit.MedianFactor(points), 9);
        var fit = ComplexityFit.SemiLog(points);
        Assert.Equal(factor, fit.Factor, 9);
        Assert.Equal(1.0, fit.R2, 9);
    }

    [Fact]
    public void DoublingPerLevelThatHitsTheBudgetReproduces()
    {
        // 4.3.1's shape: about ×2 per level, ±15% noise, n=16 killed at the budget.
        double[] noise = [1.15, 0.9, 1.0, 1.1, 0.85];
        var points = Series([10, 12, 13, 14, 15], n => 1e-4 * Math.Pow(2, n)).Select((p, i) => (p.N, p.Seconds * noise[i])).ToList();
        var (outcome, detail) = ExponentialSweep.Judge(Spec, points, 16, Budget);
        Assert.Equal(Outcome.Reproduced, outcome);
        Assert.Contains("n=16 killed", detail);
    }

    [Fact]
    public void FlatSeriesIsClean()
    {
        // Fixed compilers: every size parses in a few hundredths of a second, below the noise floor.
        var points = Series(Spec.Sizes.Select(n => (int)n), n => 0.03 + 0.001 * (n % 3));
        Assert.Equal(Outcome.Clean, ExponentialSweep.Judge(Spec, points, null, Budget).Item1);
    }

    [Fact]
    public void FlatButSlowSeriesIsCleanOnItsFactor()
    {
        // 3.6.0 under load: every parse above the floor, none growing.
        var points = Series(Spec.Sizes.Select(n => (int)n), n => 0.12 + 0.01 * (n % 2));
        var (outcome, detail) = ExponentialSweep.Judge(Spec, points, null, Budget);
        Assert.Equal(Outcome.Clean, outcome);
        Assert.Contains("not exponential", detail);
    }

    [Fact]
    public void PolynomialGrowthIsClean()
    {
        // n³ over 8–22 multiplies by about 1.24 per level: above cleanMax, but a power law of low degree.
        var points = Series(Spec.Sizes.Select(n => (int)n), n => 1e-3 * n * n * n);
        Assert.True(ComplexityFit.MedianFactor(points) > Spec.CleanMax);
        var (outcome, detail) = ExponentialSweep.Judge(Spec, points, null, Budget);
        Assert.Equal(Outcome.Clean, outcome);
        Assert.Contains("polynomial", detail);
    }

    [Fact]
    public void ExponentialThatNeverHitsTheBudgetIsNotAReproduction()
    {
        var points = Series([12, 13, 14, 15, 16], n => 1e-5 * Math.Pow(2, n));
        Assert.Equal(Outcome.WrongFailure, ExponentialSweep.Judge(Spec, points, null, Budget).Item1);
    }

    [Fact]
    public void AHangWithoutGrowthBeforeItIsAnotherBug()
    {
        var points = Series([8, 10, 12], _ => 0.03);
        var (outcome, detail) = ExponentialSweep.Judge(Spec, points, 13, Budget);
        Assert.Equal(Outcome.WrongFailure, outcome);
        Assert.Contains("no growth", detail);
    }

    [Fact]
    public void TooFewSizesAboveTheFloorAreNotEnough()
    {
        var points = Series([8, 10, 12, 13], n => n < 12 ? 0.05 : 1e-4 * Math.Pow(2, n));
        var (outcome, detail) = ExponentialSweep.Judge(Spec, points, 14, Budget);
        Assert.Equal(Outcome.WrongFailure, outcome);
        Assert.Contains("only 2 sizes", detail);
    }

    [Fact]
    public void GrowthRateReadsTheHighestSampleNotTheOneAfterTheKill()
    {
        var samples = new List<Corpus.Harness.Containment.MemorySample> { new(0.1, 30L << 20), new(5.1, 130L << 20), new(10.1, 230L << 20), new(10.2, 0) };
        Assert.Equal(20.0, ExponentialSweep.GrowthMBPerSec(samples)!.Value, 6);
    }

    [Fact]
    public void ManifestReadsTheShapeAndRejectsAFactorBelowOne()
    {
        using var corpus = new TestCorpus();
        corpus.Write("x", Manifest("1.5", "1.1"), Expected);
        var ok = Catalog.Load(corpus.Root);
        Assert.Empty(ok.Errors);
        Assert.Equal(ComplexitySpec.Exponential, ok.Entries[0].Manifest.Cases[0].Signature.Get<ComplexitySpec>("complexity")!.Shape);
        corpus.Write("x", Manifest("1.5", "0.9"), Expected);
        Assert.Contains(Catalog.Load(corpus.Root).Errors, e => e.Contains("'cases[0].signature.complexity.cleanMax'") && e.Contains("greater than 1"));
    }

    /// <summary>Runs whose parse time the test decides from the size and how often that size ran; a run past the budget is killed.</summary>
    private sealed class Parses(CaseSpec cs, Func<long, int, double> time) : FakeRunLauncher(cs)
    {
        public readonly List<string> Labels = [];
        private readonly Dictionary<long, int> _seen = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            Labels.Add(label);
            var t = time(n!.Value, _seen[n.Value] = _seen.GetValueOrDefault(n.Value) + 1);
            var killed = t >= 10;
            return new RunOutput(new RunResult(killed ? null : 0, null, killed, false, Math.Min(t, 10) + 0.2, 1 << 20, "REPRO-DONE", "", "", "", "", []),
                                 killed ? ProgramMetrics.None : new(new Dictionary<string, double> { ["parse_s"] = t }), new Dictionary<string, double>());
        }
    }

    private static async Task<(Verdict Verdict, List<string> Labels)> Sweep(Func<long, int, double> time)
    {
        var cs = new CaseSpec("attribute", "a", ["{n}"], [], Budget, Signature.Of("complexity", Spec, new ProcessPattern(ExitForm.Zero, [], null)),
                              new Dictionary<string, string>(), [], []);
        var runs = new Parses(cs, time);
        var verdict = await new ComplexityFamily().RunAsync(runs, new CellResult { Key = new CellKey("r", "attribute", "bug", "roslyn:4.8.0"), Rerun = "" });
        return (verdict, runs.Labels);
    }

    [Fact]
    public async Task AKilledSweepIsDecidedOnlyAfterItsSizesRanTwice()
    {
        // ×2 per level until n=20 is killed; the first pass has no scatter to measure, so the sizes above the floor run again.
        var (verdict, labels) = await Sweep((n, k) => 1e-5 * Math.Pow(2, n) * (k == 1 ? 1.05 : 1));
        Assert.Equal(Outcome.Reproduced, verdict.Outcome);
        var d = ((ComplexityFacts)verdict.Facts!).Decision!;
        Assert.Equal((2, "reproduced"), (d.Rounds, d.Placement));
        Assert.Equal(["n14-pass2", "n15-pass2", "n16-pass2", "n18-pass2"], labels.Where(l => l.Contains("pass")));
    }

    /// <summary>Issue 35: a planted factor on its bound (reproducedMin 1.4) ends inconclusive after its passes.</summary>
    [Fact]
    public async Task AFactorOnItsBoundIsInconclusive()
    {
        // ×1.4 per level, the k-th run of a size 1 + 0.3/k slower, killed at 22 (9.6 s × 1.4).
        var (verdict, _) = await Sweep((n, k) => 0.06 * Math.Pow(1.4, n - 8) * (1 + 0.3 / k));
        Assert.Equal(Outcome.Inconclusive, verdict.Outcome);
        var d = ((ComplexityFacts)verdict.Facts!).Decision!;
        Assert.Equal((3, "undecided"), (d.Rounds, d.Placement));
        Assert.Contains("straddles a bound (the bug ≥ 1.4, clean ≤ 1.15)", verdict.Detail);
        Assert.Contains("ended by maxRounds 3", verdict.Detail);
    }

    private const string Expected = """
        { "repro": "x", "cells": [ { "case": "one", "variant": "bug", "subject": "mono", "outcome": "unsupported", "reason": "r", "reference": "r" } ] }
        """;

    private static string Manifest(string reproducedMin, string cleanMax) => $$"""
        { "id": "ID", "title": "t", "category": "hang", "references": ["r"], "languages": ["csharp"], "platforms": ["windows"],
          "subjects": ["mono"], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.cs"] } },
          "cases": [ { "id": "one", "args": ["{n}"], "signature": { "complexity": { "shape": "exponential", "metric": "t",
            "sizes": [1, 2, 3], "reproducedMin": {{reproducedMin}}, "cleanMax": {{cleanMax}} } } } ] }
        """;
}
