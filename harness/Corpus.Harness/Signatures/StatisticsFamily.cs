using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Races: repeat until the first hit, or until enough clean runs bound the rate below epsilon at 95%. Each run is
/// judged by the process family; a run that fails any other way stops the cell as a wrong-failure.
/// </summary>
public sealed class StatisticsFamily : ISignatureFamily
{
    public string Name => "statistics";
    public bool Runs(Signature signature) => signature.Statistics is not null;

    public async Task RunAsync(ICellRuns runs, CellResult cell)
    {
        var cs = runs.Case;
        var st = cs.Signature.Statistics!;
        var needed = st.RunsForClean;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        int started = 0, done = 0, hits = 0;
        string? firstHit = null, failure = null, unsupported = null;
        var forced = runs.ForceRuns;
        // Set as soon as a run ends with the signature, before its crash capture is read, so no new run starts.
        var hitSeen = false;
        void Exited(RunResult r)
        {
            if (forced is null && ProcessFamily.Classify(cs.Signature, r).Item1 == Outcome.Reproduced) hitSeen = true;
        }
        bool MayStart() => failure is null && unsupported is null && (forced is { } f
            ? started < f
            : !hitSeen && hits == 0 && started < needed && started < st.MaxRuns && clock.Elapsed.TotalSeconds < st.BudgetSec);
        var inFlight = new Dictionary<Task<RunOutput>, string>();
        while (true)
        {
            while (inFlight.Count < st.Parallel && MayStart())
            {
                var label = $"run{started++:D4}";
                inFlight[runs.ExecuteAsync(null, label, cs.Timed, exited: Exited)] = label;
            }
            if (inFlight.Count == 0) break;
            var finished = await Task.WhenAny(inFlight.Keys);
            var doneLabel = inFlight[finished];
            inFlight.Remove(finished);
            var run = (await finished).Run;
            done++;
            var (outcome, detail) = ProcessFamily.Classify(cs.Signature, run);
            switch (outcome)
            {
                case Outcome.Unsupported:
                    unsupported ??= detail;
                    break;
                case Outcome.WrongFailure:
                    failure ??= $"{doneLabel}: {detail}";
                    break;
                case Outcome.Reproduced:
                    hits++;
                    firstHit ??= doneLabel;
                    runs.Progress($"{cell.Key} hit in {doneLabel}: {detail}");
                    break;
                default:
                    // Hundreds of clean runs: keep the first one's output only.
                    if (doneLabel != "run0000") runs.DeleteRun(run, doneLabel);
                    break;
            }
            if (done % 50 == 0) runs.Progress($"{cell.Key} {hits}/{done} hits, {clock.Elapsed.TotalSeconds:0} s");
        }
        var rate = Evidence.RecordRate(cell, hits, done, clock.Elapsed.TotalSeconds, needed);
        if (unsupported is not null)
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, unsupported);
        else if (failure is not null)
            (cell.Outcome, cell.Detail) = (Outcome.WrongFailure, failure);
        else if (hits > 0)
        {
            cell.Outcome = Outcome.Reproduced;
            cell.Detail = $"first hit in {firstHit} ({rate}); output matches the signature";
            cell.HitRun = firstHit;
        }
        else if (done >= needed)
        {
            cell.Outcome = Outcome.Clean;
            cell.Detail = $"0 hits in {done} runs: p < {RaceStatistics.UpperBoundAfterZeroHits(done):P2} at 95% (needed {needed} runs for p < {st.Epsilon:P0})";
        }
        else
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = $"inconclusive: 0 hits in {done} runs within the {st.BudgetSec:0} s budget; "
                          + $"{needed} clean runs are needed to call it clean (p < {st.Epsilon:P0} at 95%)";
        }
    }
}
