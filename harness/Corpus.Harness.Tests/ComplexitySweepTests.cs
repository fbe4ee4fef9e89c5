using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The power-law sweep of the complexity family against runs whose times the test decides.</summary>
public class ComplexitySweepTests
{
    /// <summary>Runs of 1 s each whose metric is time(n, index of the run in the cell).</summary>
    /// <summary>With <paramref name="calibration"/>, each run also prints METRIC "c" = calibration(n, index).</summary>
    private sealed class ScriptedRuns(CaseSpec cs, Func<long, int, double> time, Func<long, int, double>? calibration = null)
        : FakeRunLauncher(cs)
    {
        public List<string> Labels { get; } = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            var metrics = new Dictionary<string, double> { ["t"] = time(n!.Value, Labels.Count) };
            if (calibration is not null) metrics["c"] = calibration(n.Value, Labels.Count);
            Labels.Add(label);
            return Exited(new RunResult(0, null, false, false, 1.0, 1 << 20, "", "", "", "", "", []), metrics);
        }
    }

    private static CaseSpec Case(double repeatUnderSec, string? calibration = null) =>
        new("sweep", "sweep", ["{n}"], [], new Budget(60, 1024),
            Signature.Of("complexity", new ComplexitySpec("t", [50_000, 100_000, 200_000, 400_000], 1.7, 1.3, 0.8, repeatUnderSec,
                                                          Calibration: calibration),
                         new ProcessPattern(ExitForm.Zero, [], null)),
            new Dictionary<string, string>(), [], []);

    private static async Task<(CellResult Cell, ScriptedRuns Runs)> Sweep(double repeatUnderSec, Func<long, int, double> time,
                                                                          Func<long, int, double>? calibration = null, string? name = null)
    {
        var runs = new ScriptedRuns(Case(repeatUnderSec, calibration is null ? name : name ?? "c"), time, calibration);
        var cell = new CellResult { Key = new CellKey("r", "sweep", "bug", "s"), Rerun = "" };
        var verdict = await new ComplexityFamily().RunAsync(runs, cell);
        (cell.Outcome, cell.Detail, cell.Verdict) = (verdict.Outcome, verdict.Detail, verdict);
        return (cell, runs);
    }

    [Fact]
    public async Task RunsGoInRoundsOverTheSizes()
    {
        var (_, runs) = await Sweep(3, (n, _) => n * 1e-6);
        Assert.Equal(["n50000-rep0", "n100000-rep0", "n200000-rep0", "n400000-rep0",
                      "n50000-rep1", "n100000-rep1", "n200000-rep1", "n400000-rep1",
                      "n50000-rep2", "n100000-rep2", "n200000-rep2", "n400000-rep2"], runs.Labels);
    }

    [Theory]
    // A stretch of host load over the second round. Size after size, it would have slowed every run of one size and
    // bent the line; in rounds it slows one run of every size, every mean alike, and the slope stays 1. What it costs
    // is scatter: at 1.5 times (a slow mode as measured, 1.4-1.8) the first look decides; at twice the time, the
    // third, when each size has five runs.
    [InlineData(1.5, 1, 12)]
    [InlineData(2.0, 3, 20)]
    public async Task AStretchOfHostLoadDoesNotBendALinearSweep(double slower, int looks, int labels)
    {
        var (cell, runs) = await Sweep(3, (n, i) => n * 1e-6 * (i is >= 4 and < 8 ? slower : 1));
        var facts = (ComplexityFacts)cell.Verdict!.Facts!;
        Assert.Equal(Outcome.Clean, cell.Outcome);
        Assert.Equal(looks, facts.Decision!.Rounds);
        Assert.Equal(labels, runs.Labels.Count);
        Assert.Equal(1.0, facts.Slope!.Value, 6);
    }

    [Fact]
    public async Task AQuadraticSweepReproduces()
    {
        var (cell, _) = await Sweep(3, (n, _) => n * n * 1e-10);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal(2.0, ((ComplexityFacts)cell.Verdict!.Facts!).Slope!.Value, 6);
    }

    [Fact]
    public async Task LongRunsRunTwiceOnly()
    {
        var (_, runs) = await Sweep(0, (n, _) => n * 1e-6);
        Assert.Equal(8, runs.Labels.Count);
    }

    [Fact]
    public async Task AFirstLookThatStraddlesABoundMeasuresAnotherRoundAndDecides()
    {
        // Two runs each (long runs): the first 400K run is disturbed ×1.6, which lifts 400K's mean and the slope to 1.1,
        // and its scatter puts the interval over 1.3; a third round gives 400K a second undisturbed run, and it decides.
        var (cell, runs) = await Sweep(0, (n, i) => n * 1e-6 * (i == 3 ? 1.6 : 1));
        Assert.Equal(Outcome.Clean, cell.Outcome);
        var d = ((ComplexityFacts)cell.Verdict!.Facts!).Decision!;
        Assert.Equal(2, d.Rounds);
        Assert.Equal("clean", d.Placement);
        Assert.Equal(12, runs.Labels.Count);
        Assert.Contains("n400000-rep2", runs.Labels);
    }

    /// <summary>Issue 35: a planted figure on its bound ends inconclusive after its budget, never reproduced, clean or a wrong-failure.</summary>
    [Fact]
    public async Task AnExponentOnItsBoundIsInconclusiveAfterItsRounds()
    {
        // Slope 1.7 (reproducedMin), the k-th run of each size 1 + 0.2/k times slower: every size's mean is lifted
        // alike, the line through them stays at 1.7, and no number of runs places an interval about it on either side.
        var seen = new Dictionary<long, int>();
        var (cell, runs) = await Sweep(0, (n, _) => Math.Pow(n, 1.7) * 1e-9 * (1 + 0.2 / (seen[n] = seen.GetValueOrDefault(n) + 1)));
        Assert.Equal(Outcome.Inconclusive, cell.Outcome);
        var d = ((ComplexityFacts)cell.Verdict!.Facts!).Decision!;
        Assert.Equal((3, 3, "undecided"), (d.Rounds, d.MaxRounds, d.Placement));
        Assert.True(d.Low < 1.7 && d.High > 1.7, d.Interval);
        Assert.Contains("straddles a bound (the bug ≥ 1.7, clean ≤ 1.3) after 3 of at most 3 rounds; ended by maxRounds 3", cell.Detail);
        Assert.Equal(16, runs.Labels.Count);
    }

    /// <summary>
    /// Issue 35: a host in two speeds (a fresh-clone gate of 2026-11-27 on .NET 10: 400K at 0.82 s once and 1.16-1.19 s
    /// four times, its serialize 1.09 s against 1.46-1.57 s in the same runs). One run of each size fast, the rest
    /// slow: every size's mean is lifted alike, but its runs scatter by a whole mode, so the sweep needs more rounds and
    /// ends with a wider interval. With the serialize time as the calibration, the runs of a size close up about their
    /// mean and the first look decides. Either way the points are the sizes' geometric means as measured.
    /// </summary>
    [Fact]
    public async Task ACalibrationPutsRunsOfTwoHostSpeedsOnOneLine()
    {
        // Run 0 of each size fast; the rest 1.4 times slower, in the metric and the calibration alike, with a little
        // noise of their own (±2 %) so the calibrated runs are not identical.
        double Mode(long n, int i) => i < 4 ? 1 : 1.4 * (1 + 0.02 * Math.Sin(n + 7.0 * i));
        double Time(long n, int i) => n * 1e-6 * Mode(n, i);
        var (plain, _) = await Sweep(0, Time);
        var (cell, runs) = await Sweep(0, Time, (n, i) => n * 1.2e-6 * Mode(n, i) * (1 + 0.01 * Math.Cos(3.0 * i)));
        var (bare, facts) = (((ComplexityFacts)plain.Verdict!.Facts!).Decision!, (ComplexityFacts)cell.Verdict!.Facts!);
        Assert.Equal(Outcome.Clean, plain.Outcome);
        Assert.True(bare.Rounds > 1, bare.Interval);
        Assert.Equal(Outcome.Clean, cell.Outcome);
        Assert.Equal(1, facts.Decision!.Rounds);
        Assert.Equal(8, runs.Labels.Count);
        Assert.True(facts.Decision.Low > 0.9 && facts.Decision.High < 1.1, facts.Decision.Interval);
        Assert.True(facts.Decision.High - facts.Decision.Low < (bare.High - bare.Low) / 3, $"{facts.Decision.Interval} against {bare.Interval}");
        Assert.Equal("c", facts.Calibration);
        Assert.Equal(400_000 * 1e-6 * Math.Sqrt(Mode(400_000, 7)), facts.Points[^1][1], 9);
        Assert.InRange(facts.CalibrationWeight!.Value, 0.9, 1.0);
        Assert.Contains("each run's scaled by (the geometric mean c of its size over its own)^", facts.Decision.Method);
    }

    /// <summary>Mono's deserialize scatters on its own (its collector), not with the serialize before it: a calibration
    /// that does not move with the metric gets no weight, and the points are the sizes' geometric means as measured.</summary>
    [Fact]
    public async Task ACalibrationThatDoesNotMoveWithTheMetricGetsNoWeight()
    {
        // Odd rounds slow the metric, even rounds the calibration.
        var (cell, runs) = await Sweep(0, (n, i) => n * n * 1e-10 * (i / 4 % 2 == 1 ? 1.3 : 1), (n, i) => n * 1e-6 * (i / 4 % 2 == 0 ? 1.3 : 1));
        var facts = (ComplexityFacts)cell.Verdict!.Facts!;
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal(0, facts.CalibrationWeight);
        // 400K's r-th run is the round r's: slowed in the odd rounds.
        var k = runs.Labels.Count(l => l.StartsWith("n400000-", StringComparison.Ordinal));
        Assert.Equal(400_000.0 * 400_000 * 1e-10 * Math.Pow(1.3, (double)(k / 2) / k), facts.Points[^1][1], 9);
    }

    [Fact]
    public async Task ARunWithoutItsCalibrationFigureIsAnErrorNamingTheField()
    {
        var (cell, _) = await Sweep(0, (n, _) => n * 1e-6, name: "serialize_cpu_s");
        Assert.Equal(Outcome.Error, cell.Outcome);
        Assert.Contains("printed no METRIC 'serialize_cpu_s' named by field 'signature.complexity.calibration'", cell.Detail);
    }
}
