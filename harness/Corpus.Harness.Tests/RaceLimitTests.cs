using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>A race's verdict says which limit ended its runs: RUNS=N is not a budget.</summary>
public sealed class RaceLimitTests
{
    private sealed class CleanRuns(CaseSpec cs, int? force) : FakeRunLauncher(cs)
    {
        public int Started;
        public override int? ForceRuns => force;

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            Interlocked.Increment(ref Started);
            return Exited(new RunResult(0, null, false, false, 0.01, 1 << 20, "REPRO-DONE\n", "", "", "", "", []));
        }
    }

    private static CaseSpec Race() =>
        new("race", "", [], [], new Budget(60, 256),
            new Signature("statistics", new Dictionary<string, object>
            {
                ["process"] = new ProcessPattern(ExitForm.Sigabrt, [], null),
                ["statistics"] = new StatisticsSpec(0.05, 1000, 150),
            }, ProcessPattern.DefaultClean), new Dictionary<string, string>(), [], []);

    private static async Task<Verdict> Run(int? force)
    {
        var cell = new CellResult { Key = new CellKey("r", "race", "bug", "s"), Rerun = "" };
        return await new StatisticsFamily().RunAsync(new CleanRuns(Race(), force), cell);
    }

    [Fact]
    public async Task RunsEndedByRunsNIsNotABudgetThatRanOut()
    {
        var v = await Run(2);
        Assert.Equal(Outcome.Inconclusive, v.Outcome);
        Assert.Contains("0 hits in 2 runs: the rate is below 77.64 % at 95%, not yet below epsilon 5 % (59 runs needed); ended by RUNS=2", v.Detail);
        Assert.DoesNotContain("budget", v.Detail);
        Assert.Equal("RUNS=2", ((RaceFacts)v.Facts!).StoppedBy);
    }

    [Fact]
    public async Task EnoughCleanRunsEndAClean()
    {
        var v = await Run(null);
        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Equal("59 clean runs", ((RaceFacts)v.Facts!).StoppedBy);
    }

    /// <summary>An undecided measurement fails the gate under its own name, and is never an expectation.</summary>
    [Fact]
    public void AnInconclusiveCellFailsTheGateAsInconclusive()
    {
        var key = new CellKey("r", "race", "fix", "s");
        var (gate, message) = CellResult.Compare(Outcome.Inconclusive, new Expectation(key, Outcome.Clean, "fixed", null));
        Assert.Equal(GateStatus.Inconclusive, gate);
        Assert.True(gate.Fails());
        Assert.Equal("INCONCLUSIVE: expected clean (fixed), but the measurement's budget ran out undecided", message);
        Assert.Equal("inconclusive", Outcome.Inconclusive.Name());
    }
}
