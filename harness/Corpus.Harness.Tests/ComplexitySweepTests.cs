using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>The power-law sweep of the complexity family against runs whose times the test decides.</summary>
public class ComplexitySweepTests
{
    /// <summary>Runs of 1 s each whose metric is time(n, index of the run in the cell).</summary>
    private sealed class ScriptedRuns(CaseSpec cs, Func<long, int, double> time) : FakeRunLauncher(cs)
    {
        public List<string> Labels { get; } = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            var value = time(n!.Value, Labels.Count);
            Labels.Add(label);
            return Exited(new RunResult(0, null, false, false, 1.0, 1 << 20, "", "", "", "", "", []), new() { ["t"] = value });
        }
    }

    private static CaseSpec Case(double repeatUnderSec) =>
        new("sweep", "sweep", ["{n}"], [], new Budget(60, 1024),
            Signature.Of("complexity", new ComplexitySpec("t", [50_000, 100_000, 200_000, 400_000], 1.7, 1.3, 0.8, repeatUnderSec),
                         new ProcessPattern(ExitForm.Zero, [], null)),
            new Dictionary<string, string>(), [], []);

    private static async Task<(CellResult Cell, ScriptedRuns Runs)> Sweep(double repeatUnderSec, Func<long, int, double> time)
    {
        var runs = new ScriptedRuns(Case(repeatUnderSec), time);
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

    [Fact]
    public async Task AStretchOfHostLoadDoesNotBendALinearSweep()
    {
        // The last six runs at three times their time. Size after size, they would be every run of 200K and 400K:
        // median pair slope 1.66, neither clean nor the bug. In rounds, each size keeps an undisturbed run.
        var (cell, _) = await Sweep(3, (n, i) => n * 1e-6 * (i >= 6 ? 3 : 1));
        Assert.Equal(Outcome.Clean, cell.Outcome);
        Assert.Equal(1.0, ((ComplexityFacts)cell.Verdict!.Facts!).Slope!.Value, 6);
    }

    [Fact]
    public async Task AQuadraticSweepReproduces()
    {
        var (cell, _) = await Sweep(3, (n, _) => n * n * 1e-10);
        Assert.Equal(Outcome.Reproduced, cell.Outcome);
        Assert.Equal(2.0, ((ComplexityFacts)cell.Verdict!.Facts!).Slope!.Value, 6);
    }

    [Fact]
    public async Task LongRunsAreNotRepeated()
    {
        var (_, runs) = await Sweep(0, (n, _) => n * 1e-6);
        Assert.Equal(4, runs.Labels.Count);
    }
}
