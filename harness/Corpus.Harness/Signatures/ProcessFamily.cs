using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>One run, judged by exit status and output: the bug, clean, or a failure of another kind.</summary>
public sealed class ProcessFamily : ISignatureFamily
{
    public string Name => "process";
    public bool Runs(Signature signature) => true;

    public async Task RunAsync(ICellRuns runs, CellResult cell)
    {
        runs.Progress($"{cell.Key} …");
        var (run, metrics, _) = await runs.ExecuteAsync(null, "run", runs.Case.Timed);
        Record(cell, run, metrics);
        (cell.Outcome, cell.Detail) = Classify(runs.Case.Signature, run);
    }

    internal static void Record(CellResult cell, RunResult run, IReadOnlyDictionary<string, double> metrics)
    {
        foreach (var kv in metrics) cell.Metrics[kv.Key] = kv.Value;
        cell.Metrics["wall_s"] = run.WallSeconds;
        cell.Metrics["peak_mb"] = Math.Round(run.PeakBytes / 1048576.0, 1);
        cell.Metrics["status"] = run.Status;
        if ((run.TimedOut || run.MemoryCapped) && ExponentialSweep.GrowthMBPerSec(run.Memory) is { } rate)
            cell.Metrics["memory_growth_mb_s"] = Math.Round(rate, 1);
    }

    /// <summary>One run against the process signature: the bug, clean, or a failure of another kind.</summary>
    public static (Outcome, string) Classify(Signature sig, RunResult run)
    {
        if (sig.Unsupported is { } u && ProcessMatch.Mismatch(u.When, run) is null)
            return (Outcome.Unsupported, $"{u.Reason} ({run.Status})");
        if (sig.Process is null) return (Outcome.Clean, run.Status);
        var bug = ProcessMatch.Mismatch(sig.Process!, run);
        if (bug is null) return (Outcome.Reproduced, $"{run.Status}; output matches the signature");
        var clean = ProcessMatch.Mismatch(sig.Clean, run);
        if (clean is null)
        {
            // What the clean patterns matched (e.g. the diagnostics a fixed compiler gave), beyond the done marker.
            var seen = sig.Clean.Output.Select(p => System.Text.RegularExpressions.Regex.Match(run.Stdout + run.Stderr, p,
                                                        System.Text.RegularExpressions.RegexOptions.Multiline).Value.Trim())
                .Where(v => v.Length > 0 && v != "REPRO-DONE").ToList();
            return (Outcome.Clean, $"{run.Status} in {run.WallSeconds:0.00} s{(seen.Count > 0 ? $" with {string.Join(", ", seen)}" : "")}; no signature ({bug})");
        }
        return (Outcome.WrongFailure, $"{run.Status}: not the signature ({bug}) and not clean ({clean}); {ProcessMatch.Tail(run)}");
    }
}
