using Corpus.Harness.Containment;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Races: repeat until the first hit, or until enough clean runs bound the rate below epsilon at 95%. Each run is
/// judged by the process family; a run that fails any other way stops the cell as a wrong-failure.
/// </summary>
public sealed class StatisticsFamily : ISignatureFamily
{
    public string Key => "statistics";
    public string Refines => ProcessFamily.Name;
    public object ReadSpec(Fields f) => StatisticsSpec.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (!cs.Signature.Has(ProcessFamily.Name)) throw c.Error("repeats need a 'process' signature to count hits", "signature.statistics");
    }

    public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        var cs = runs.Case;
        var st = cs.Signature.Get<StatisticsSpec>(Key)!;
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
            if (done % 20 == 0) runs.Progress($"{cell.Key} {hits}/{done} hits, {clock.Elapsed.TotalSeconds:0} s");
        }
        var seconds = clock.Elapsed.TotalSeconds;
        var rate = RaceStatistics.Wilson(hits, done);
        // Which limit ended the runs, so a rate is never read as a budget's verdict.
        var stoppedBy = hits > 0 && forced is null ? "the first hit" : forced is not null ? $"RUNS={forced}"
            : done >= needed ? $"{needed} clean runs" : done >= st.MaxRuns ? $"maxRuns {st.MaxRuns}" : $"the {st.BudgetSec:0} s budget";
        var facts = new RaceFacts(hits, done, Math.Round(rate.Point, 4), [Math.Round(rate.Low, 4), Math.Round(rate.High, 4)], needed,
                                  hits == 0 ? Math.Round(RaceStatistics.UpperBoundAfterZeroHits(done), 4) : null, st.Epsilon,
                                  Math.Round(seconds, 1), done == 0 ? 0 : Math.Round(seconds / done, 3), firstHit, stoppedBy);
        Verdict V(Outcome o, string d) => new(o, d) { Facts = facts, KeyFigures = facts.KeyFigures(), HitRun = o == Outcome.Reproduced ? firstHit : null };
        if (unsupported is not null) return V(Outcome.Unsupported, unsupported);
        if (failure is not null) return V(Outcome.WrongFailure, failure);
        if (hits > 0) return V(Outcome.Reproduced, $"first hit in {firstHit} ({rate}); output matches the signature");
        if (done >= needed)
            return V(Outcome.Clean, $"0 hits in {done} runs: p < {RaceStatistics.UpperBoundAfterZeroHits(done):P2} at 95% (needed {needed} runs for p < {st.Epsilon:P0})");
        // Undecided: no hit, and too few runs for the rate's interval to be under epsilon. Its own outcome, never clean.
        return V(Outcome.Inconclusive, $"0 hits in {done} runs: the rate is below {RaceStatistics.UpperBoundAfterZeroHits(done):P2} at 95%, "
                                       + $"not yet below epsilon {st.Epsilon:P0} ({needed} runs needed); ended by {stoppedBy} after {seconds:0.#} s");
    }

    /// <summary>Rounds of as many forced runs as a clean verdict needs, until Fisher's exact test decides or the budget ends.</summary>
    public ComparePlan PlanComparison(CaseSpec cs, int rounds)
    {
        var st = cs.Signature.Get<StatisticsSpec>(Key)!;
        var max = Math.Max(1, st.MaxRuns / st.RunsForClean);
        return new ComparePlan(1, max, st.RunsForClean, 4 * st.BudgetSec,
                               $"rounds of {st.RunsForClean} runs per subject until p < {Comparisons.Alpha} (Fisher's exact test) or the difference is within ±{st.Epsilon}, "
                               + $"at most {max} rounds ({max * st.RunsForClean} runs, maxRuns {st.MaxRuns}) and no new round after {4 * st.BudgetSec:0} s (4 × budgetSec)");
    }

    public CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new) =>
        Comparisons.Rates(@base, @new, v => v.Facts is RaceFacts f ? (f.Hits, f.Runs, f.Epsilon) : null);

}

/// <param name="RateCi95">The 95% Wilson interval of the rate.</param>
/// <param name="PUpper95">With no hit: the rate is below this at 95%.</param>
/// <param name="StoppedBy">Which limit ended the runs: the first hit, enough clean runs, RUNS=N, maxRuns or the budget.</param>
public sealed record RaceFacts(int Hits, int Runs, double Rate, double[] RateCi95, int RunsForClean, double? PUpper95, double Epsilon,
                               double Seconds, double SecondsPerRun, string? FirstHit, string StoppedBy)
{
    private static string Percent(double d) => (d * 100).ToString("0.##", System.Globalization.CultureInfo.InvariantCulture) + "%";

    public IReadOnlyList<string> KeyFigures() =>
        [$"hits {Hits}/{Runs}, rate {Percent(Rate)} [{Percent(RateCi95[0])}, {Percent(RateCi95[1])}]",
         .. PUpper95 is { } p ? new[] { $"rate < {Percent(p)} at 95%" } : [],
         $"{SecondsPerRun.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture)} s/run"];
}

/// <summary>Races: repeat a run until the first hit, or until enough clean runs bound the rate below epsilon.</summary>
/// <param name="Parallel">Runs at a time; independent processes, so a clean verdict's 300 runs fit the budget.</param>
public sealed record StatisticsSpec(double Epsilon, int MaxRuns, double BudgetSec, int Parallel = 1)
{
    public int RunsForClean => RaceStatistics.RunsForClean(Epsilon);

    public static StatisticsSpec Read(Fields f)
    {
        f.AllowOnly("epsilon", "maxRuns", "budgetSec", "parallel");
        var eps = f.NumberOr("epsilon", 0.01)!.Value;
        if (eps is <= 0 or >= 1) throw f.Error($"must be between 0 and 1, found {eps}", "epsilon");
        var spec = new StatisticsSpec(eps, f.IntOr("maxRuns", 1000, min: 1, max: 1_000_000)!.Value,
                                      f.NumberOr("budgetSec", 120, min: 0, above: true, max: 86400)!.Value,
                                      f.IntOr("parallel", 1, min: 1, max: 64)!.Value);
        if (spec.MaxRuns < spec.RunsForClean)
            throw f.Error($"{spec.MaxRuns} runs can never show p < {eps} at 95%; at least {spec.RunsForClean} are needed", "maxRuns");
        return spec;
    }
}
