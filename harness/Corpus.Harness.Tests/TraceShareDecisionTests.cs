using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// Issue 35: a trace's share decides only when its interval is on one side of the bound; while it straddles it, more
/// traced runs are taken and pooled, and a share still on its bound when the budget is spent leaves the cell
/// inconclusive, never reproduced, clean or a wrong-failure.
/// </summary>
public class TraceShareDecisionTests
{
    private static readonly TraceCapture Cpu = new("cpu", [], 200_000, null, [], [], [], null);

    /// <summary>A traced run of equal samples, <paramref name="share"/> of them under ObjectManager, in runs of 20 of one stack.</summary>
    private static TraceModel Trace(double share, int samples = 400, int seed = 0)
    {
        var list = new List<TraceSample>();
        var hits = (int)Math.Round(share * samples / 20);
        for (var b = 0; b < samples / 20; b++)
            for (var j = 0; j < 20; j++)
                list.Add(new TraceSample(b < hits ? ["Main", "Deserialize", "ObjectManager.Fix"] : ["Main", "Deserialize", "Parse"]) { Time = (b * 20 + j) / 1000.0 });
        return new TraceModel("cpu", "samples", list, []);
    }

    /// <summary>Traced runs on demand, each a new trace of the given share.</summary>
    private sealed class Traced(CaseSpec cs, CellResult cell, double share) : FakeRunLauncher(cs), IRunLauncher
    {
        public int Made;

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured) => throw new NotSupportedException();

        public Task<TraceRecord?> TraceAsync(TraceCapture trace, long? n, int attempt = 1)
        {
            Made++;
            var record = new TraceRecord("planted", "cpu", $"trace-n{n}-{attempt}", n, null, 0, 400, 0, 1, null, null, null, null, null);
            cell.Record(record, Trace(share, seed: attempt), new RunFindings());
            return Task.FromResult<TraceRecord?>(record);
        }
    }

    private static async Task<(EvidenceResult Result, int Traced)> Judge(double share, double min, Outcome outcome = Outcome.Reproduced)
    {
        var spec = new TraceSpec([new TraceShareSpec("ObjectManager", "Deserialize", min, min)], [], []);
        var cs = new CaseSpec("deserialize", "d", ["{n}"], [], new Budget(60, 1024), Signature.Of("trace", spec, new ProcessPattern(ExitForm.Zero, [], null)),
                              new Dictionary<string, string>(), [], []) { Captures = new Capture.CaptureSpecs(new Dictionary<string, object> { ["trace"] = Cpu }) };
        var cell = new CellResult { Key = new CellKey("r", "deserialize", "bug", "net10"), Rerun = "" };
        var runs = new Traced(cs, cell, share);
        await ((IRunLauncher)runs).TraceAsync(Cpu, 200_000);
        var result = await new TraceEvidence().CheckAsync(new EvidenceContext(cs, null!, cell, null!, runs, null) { Outcome = outcome });
        return (result, runs.Made);
    }

    [Fact]
    public async Task AShareFarFromItsBoundDecidesOnTheFirstTrace()
    {
        var (result, traced) = await Judge(share: 0.9, min: 0.5);
        Assert.Equal((EvidenceStatus.Holds, 1), (result.Status, traced));
        (result, traced) = await Judge(share: 0.1, min: 0.5, Outcome.Clean);
        Assert.Equal((EvidenceStatus.Holds, 1), (result.Status, traced));
    }

    [Fact]
    public async Task AShareOnItsBoundTakesMoreTracesAndEndsUndecided()
    {
        var (result, traced) = await Judge(share: 0.5, min: 0.5);
        Assert.Equal(EvidenceStatus.Undecided, result.Status);
        Assert.Equal(TraceSpec.DefaultDecide.MaxRounds, traced);
        Assert.Contains("straddles 50%", result.Detail);
        Assert.Contains("over 3 traced runs", result.Detail);
        Assert.Contains("ended by maxRounds 3", result.Detail);
        var facts = Assert.IsType<TraceFacts>(result.Facts).Shares.Single();
        Assert.Equal(3, facts.Traces);
        Assert.Null(facts.Holds);
        Assert.True(facts.Low < 0.5 && facts.High > 0.5, facts.Percent);
        // The cell is inconclusive: not reproduced, not clean, not a wrong-failure.
        Assert.Equal(Outcome.Inconclusive, CellRunner.Compose(new Verdict(Outcome.Reproduced, "exponent 2"), [result]).Item1);
        Assert.Equal(Outcome.Inconclusive, CellRunner.Compose(new Verdict(Outcome.Clean, "exponent 1"), [result]).Item1);
    }
}
