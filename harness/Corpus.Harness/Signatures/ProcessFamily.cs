using Corpus.Harness.Containment;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <param name="MemoryGrowthMBs">How fast the run's memory grew, when it ended at its budget.</param>
/// <param name="Matched">What each output pattern of the signature matched in the run (the bug's, else the clean one's).</param>
/// <param name="CpuSeconds">On the CPU clock (budget "clock": "cpu"): the CPU seconds the run's processes used.</param>
public sealed record ProcessFacts(string Status, double WallSeconds, double PeakMB, double? MemoryGrowthMBs,
                                  ProgramMetrics Metrics, double? CpuSeconds = null)
{
    public IReadOnlyList<string> Matched { get; init; } = [];
    /// <summary>On the CPU clock, the runs that came before this one and were starved (their status and seconds).</summary>
    public IReadOnlyList<string> Starved { get; init; } = [];

    public static ProcessFacts Of(RunResult run, ProgramMetrics metrics) =>
        new(run.Status, Math.Round(run.WallSeconds, 3), Math.Round(run.PeakBytes / 1048576.0, 1),
            run.Stopped && ExponentialSweep.GrowthMBPerSec(run.Memory) is { } g ? Math.Round(g, 1) : null, metrics,
            run.CpuBudget is null ? null : run.CpuSeconds);

    public IReadOnlyList<string> KeyFigures() =>
        [Status, $"{WallSeconds:0.##} s", .. CpuSeconds is { } cpu ? new[] { $"CPU {cpu:0.##} s" } : [],
         $"peak {PeakMB:0.#} MB", .. MemoryGrowthMBs is { } g ? new[] { $"memory +{g:0.#} MB/s" } : []];
}

/// <summary>One run, judged by exit status and output: the bug, clean, or a failure of another kind.</summary>
public sealed class ProcessFamily : ISignatureFamily
{
    public const string Name = "process";
    public string Key => Name;
    public bool TakesCpuClock => true;
    public object ReadSpec(Fields f) => ProcessPattern.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (cs.Signature.Get<ProcessPattern>(Key)?.MaxSeconds is { } pm && pm >= cs.Budget.TimeoutSec)
            throw c.Error($"maxSeconds {pm} must be shorter than the run's budget.timeoutSec ({cs.Budget.TimeoutSec} s)", "signature.process.maxSeconds");
    }

    /// <summary>Runs on the CPU clock, in all, while the host starves them; then the cell is inconclusive.</summary>
    public const int StarvedRuns = 3;

    public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        var starved = new List<string>();
        using var ticker = RunTicker.Start(runs, cell.Key.ToString());
        RunOutput output;
        // A starved run showed neither an end nor its CPU budget spent: measure again, the host may have room now.
        while (true)
        {
            output = await runs.ExecuteAsync(null, starved.Count == 0 ? "run" : $"run{starved.Count + 1}", runs.Case.Timed);
            if (!output.Run.Starved || starved.Count + 1 == StarvedRuns) break;
            starved.Add(Starved(output.Run));
            runs.Progress($"{cell.Key} {starved[^1]}; running it again");
        }
        var (run, metrics, _) = output;
        var sig = runs.Case.Signature;
        var (outcome, detail) = Classify(sig, run);
        if (starved.Count > 0) detail = $"{detail}; before it, {string.Join("; ", starved)}";
        var pattern = outcome == Outcome.Reproduced ? sig.Get<ProcessPattern>(Name) : sig.Clean;
        var facts = ProcessFacts.Of(run, metrics) with { Matched = pattern is null ? [] : Matches(pattern, run), Starved = starved };
        return new Verdict(outcome, detail) { Facts = facts, KeyFigures = facts.KeyFigures() };
    }

    /// <summary>What a starved run got, against its CPU budget.</summary>
    public static string Starved(RunResult run) =>
        $"starved: {run.CpuSeconds ?? 0:0.00} s of CPU in {run.WallSeconds:0.0} s, its wall cap; the budget is {run.CpuBudget:0.##} s of CPU";

    /// <summary>Runs are cheap: --rounds of them per subject, so time and peak memory get an interval over runs.</summary>
    public ComparePlan PlanComparison(CaseSpec cs, int rounds) =>
        new(rounds, rounds, null, double.MaxValue, $"{rounds} runs per subject (--rounds)");

    public CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new) => Comparisons.WithFigures(@base, @new,
        [.. new[] { Comparisons.RatioOf("wall s", Of(@base, f => f.WallSeconds), Of(@new, f => f.WallSeconds)),
                    Comparisons.RatioOf("peak MB", Of(@base, f => f.PeakMB), Of(@new, f => f.PeakMB)) }.OfType<FigureComparison>()]);

    /// <summary>A figure of each round's process facts (hangs and other one-run families record them too).</summary>
    internal static List<double> Of(IReadOnlyList<Verdict> rounds, Func<ProcessFacts, double> figure) =>
        rounds.Select(v => v.Facts).OfType<ProcessFacts>().Select(figure).ToList();

    /// <summary>The text each output pattern matched (the first match of each), for facts.json.</summary>
    public static IReadOnlyList<string> Matches(ProcessPattern pattern, RunResult run) =>
        pattern.Output.Select(p => System.Text.RegularExpressions.Regex.Match(run.Stdout + run.Stderr, p,
                                       System.Text.RegularExpressions.RegexOptions.Multiline).Value.Trim())
               .Where(v => v.Length > 0).ToList();

    /// <summary>One run against the process signature: the bug, clean, or a failure of another kind.</summary>
    public static (Outcome, string) Classify(Signature sig, RunResult run)
    {
        if (sig.Unsupported is { } u && ProcessMatch.Mismatch(u.When, run) is null)
            return (Outcome.Unsupported, $"{u.Reason} ({run.Status})");
        // Neither the hang (its CPU budget spent) nor an end: on the CPU clock that is undecided, never a verdict.
        if (run.Starved)
            return (Outcome.Inconclusive, $"{Starved(run)}: the run showed neither the budget spent nor an end, "
                                          + $"after {StarvedRuns} runs the host starved");
        if (sig.Get<ProcessPattern>(Name) is not { } process) return (Outcome.Clean, run.Status);
        var bug = ProcessMatch.Mismatch(process, run);
        if (bug is null) return (Outcome.Reproduced, $"{run.Status}; output matches the signature");
        var clean = ProcessMatch.Mismatch(sig.Clean, run);
        if (clean is null)
        {
            // What the clean patterns matched (e.g. the diagnostics a fixed compiler gave), beyond the done marker.
            var seen = sig.Clean.Output.Select(p => System.Text.RegularExpressions.Regex.Match(run.Stdout + run.Stderr, p,
                                                        System.Text.RegularExpressions.RegexOptions.Multiline).Value.Trim())
                .Where(v => v.Length > 0 && v != "REPRO-DONE").ToList();
            return (Outcome.Clean, $"{run.Status} in {run.WallSeconds:0.00} s{(run.CpuBudget is not null && run.CpuSeconds is { } cpu ? $" ({cpu:0.00} s of CPU)" : "")}{(seen.Count > 0 ? $" with {string.Join(", ", seen)}" : "")}; no signature ({bug})");
        }
        return (Outcome.WrongFailure, $"{run.Status}: not the signature ({bug}) and not clean ({clean}); {ProcessMatch.Tail(run)}");
    }
}
