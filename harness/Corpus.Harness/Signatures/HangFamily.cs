using System.Globalization;
using System.Text.RegularExpressions;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Hang family: one run whose UI thread blocks in a call until another thread exits. The program stamps its own
/// markers in milliseconds; <see cref="HangJudge"/> decides from them. The cell spends its time waiting.
/// </summary>
public sealed class HangFamily : ISignatureFamily
{
    public string Key => "hang";
    public object ReadSpec(Fields f) => HangSpec.Read(f);
    public bool HoldsStill => true;

    public void Validate(CaseSpec cs, Fields c)
    {
        var hg = cs.Signature.Get<HangSpec>(Key)!;
        if (hg.LongestMs >= cs.Budget.TimeoutSec * 1000.0)
            throw c.Error($"a hang of up to {hg.LongestMs / 1000:0.#} s must be shorter than the run's budget.timeoutSec ({cs.Budget.TimeoutSec} s)",
                          hg.ExpectedMs is null ? "signature.hang.minSec" : "signature.hang.expectedMs");
    }

    /// <summary>
    /// The hang is measured in a run no debugger touches (an attached winedbg holds a thread's exit and would stretch
    /// it); the case's timed capture gets a run of its own, only when the measured run reproduced. The block's length
    /// decides only when its interval lies in one region (clean, or the hang's window): one run's interval spans the
    /// program's own stamps and the harness's clock of the same lines; while it straddles an edge, more runs, and
    /// their mean's interval; still straddling when the case's decide budget is spent: inconclusive.
    /// </summary>
    public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        var cs = runs.Case;
        var (spec, unusable) = cs.Signature.Get<HangSpec>(Key)!.For(runs.Env);
        if (spec is null) return new Verdict(Outcome.Error, $"signature.hang.expectedMsFrom: {unusable}");
        if (spec.LongestMs >= cs.Budget.TimeoutSec * 1000.0)
            return new Verdict(Outcome.Error, $"a hang of up to {spec.LongestMs / 1000:0.#} s (from {spec.ExpectedMsFrom}) does not fit the "
                                              + $"run's budget.timeoutSec ({cs.Budget.TimeoutSec} s)");
        var decide = spec.Decide;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var blocks = new List<double>();
        for (var round = 1; ; round++)
        {
            runs.Progress(round == 1 ? $"{cell.Key} …" : $"{cell.Key} run {round}: the block's interval straddles an edge …");
            var label = round == 1 ? "run" : $"run{round}";
            var (run, metrics, markers) = await runs.ExecuteAsync(null, label, null);
            var process = ProcessFacts.Of(run, metrics);
            var (outcome, detail) = ProcessFamily.Classify(cs.Signature, run);
            if (outcome == Outcome.Unsupported) return new Verdict(outcome, detail) { Facts = process, KeyFigures = process.KeyFigures() };
            var verdict = HangJudge.Judge(spec, run.Stdout + run.Stderr, judgeWindow: false);
            var facts = verdict.Facts with { HarnessBlockMs = HangJudge.HarnessBlockMs(markers) };
            var (o, d) = ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad
                ? (Outcome.WrongFailure, $"{run.Status}: the run did not finish ({bad}){(run.TimedOut ? "; the hang never resolved" : "")}; "
                                         + $"{verdict.Detail}; {ProcessMatch.Tail(run)}")
                : (verdict.Outcome, verdict.Detail);
            // A run that failed in another way, or judged nothing, decides as it is.
            if (o is not (Outcome.Reproduced or Outcome.Clean) || facts.BlockMs is not { } block)
                return new Verdict(o, d) { Facts = facts, KeyFigures = facts.KeyFigures() };
            blocks.Add(block);
            var interval = blocks.Count == 1
                ? new Interval(block, Math.Min(block, facts.HarnessBlockMs ?? block), Math.Max(block, facts.HarnessBlockMs ?? block)) { Confidence = 0 }
                : Decision.Mean(blocks, decide.LookConfidence);
            var placement = HangJudge.Place(spec, interval);
            var method = blocks.Count == 1 ? "one run: from the program's stamps to the harness's clock of the same lines"
                : $"the mean of {blocks.Count} runs, Student's t";
            var stop = placement != Placement.Undecided ? "decided"
                : round >= decide.MaxRounds ? $"maxRounds {decide.MaxRounds}"
                : clock.Elapsed.TotalSeconds >= decide.BudgetSec ? $"the {decide.BudgetSec:0} s budget" : null;
            if (stop is null) continue;
            var (windowLow, windowHigh) = spec.Window;
            facts = facts with
            {
                Decision = DecisionFacts.Of("block ms", interval, method, windowLow, spec.CleanMaxMs, true, placement, round, decide,
                                            clock.Elapsed.TotalSeconds, stop) with { WindowHigh = double.IsInfinity(windowHigh) ? null : windowHigh },
                Blocks = blocks.Select(b => Math.Round(b, 1)).ToList(),
            };
            if (placement == Placement.Undecided)
                return new Verdict(Outcome.Inconclusive, $"{facts.Decision.Undecided}; last run: {d}") { Facts = facts, KeyFigures = facts.KeyFigures() };
            // Wholly outside both regions: longer than the window, or between clean and the hang.
            if (placement == Placement.Between)
                (o, d) = (Outcome.WrongFailure, $"{d}, but the block {facts.Decision.Interval} ms{(round > 1 ? $" over {round} runs" : "")} is outside "
                                                 + $"the hang's window [{windowLow:0}, {windowHigh:0}] ms (at least {spec.MinSec} s"
                                                 + $"{(spec.ExpectedMs is { } e ? $", the expected {e:0} ms ± {spec.Tolerance:P0}" : "")})");
            if (o == Outcome.Reproduced && cs.Timed is { } timed)
            {
                runs.Progress($"{cell.Key} capture run …");
                await runs.ExecuteAsync(null, "capture", timed, untilCaptured: true);
            }
            if (round > 1) d += $" ({round} runs: {string.Join(", ", facts.Blocks.Select(b => $"{b:0}"))} ms)";
            return new Verdict(o, d) { Facts = facts, KeyFigures = facts.KeyFigures() };
        }
    }

    /// <summary>A hang is one run: --rounds of them per subject give the block's length an interval over runs.</summary>
    public ComparePlan PlanComparison(CaseSpec cs, int rounds) =>
        new(rounds, rounds, null, double.MaxValue, $"{rounds} runs per subject (--rounds)");

    public CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new)
    {
        static List<double> Block(IReadOnlyList<Verdict> vs) => vs.Select(v => v.Facts).OfType<HangFacts>().Select(f => f.BlockMs).OfType<double>().ToList();
        return Comparisons.WithFigures(@base, @new, [.. new[] { Comparisons.RatioOf("UI block ms", Block(@base), Block(@new)) }.OfType<FigureComparison>()]);
    }
}

/// <param name="BlockMs">The longest judged UI call, by the program's own clock.</param>
/// <param name="ExitToReturnMs">From the worker's exit stamp to the call's return.</param>
/// <param name="HarnessBlockMs">The same gap as the harness saw the lines arrive.</param>
public sealed record HangFacts(string? Call, double? BlockMs, double? ExpectedMs, double? ExitToReturnMs, double? WorkerExitMs,
                               double? HarnessBlockMs, IReadOnlyList<string> Calls, IReadOnlyList<string> Evidence)
{
    /// <summary>The block's interval against the hang's window and the clean bound, at the last look.</summary>
    public DecisionFacts? Decision { get; init; }
    /// <summary>Every measured run's block, when there were several.</summary>
    public IReadOnlyList<double> Blocks { get; init; } = [];

    public IReadOnlyList<string> KeyFigures() =>
        [.. BlockMs is { } b ? new[] { $"{Call} blocked {b:0} ms{(ExpectedMs is { } e ? $" (expected {e:0})" : "")}" } : [],
         .. ExitToReturnMs is { } r ? new[] { $"returned {r:0} ms after the worker exited" } : [],
         .. Evidence.Count > 0 ? new[] { $"evidence {Evidence.Count}" } : []];
}

/// <summary>A UI call as the program stamped it: begin and, if it returned, end (ms since the program started).</summary>
public sealed record UiCall(string Name, double BeginMs, double? EndMs)
{
    public double? BlockedMs => EndMs - BeginMs;
}

public sealed record HangVerdict(Outcome Outcome, string Detail, HangFacts Facts);

public static partial class HangJudge
{
    /// <summary>
    /// The call's return and the worker-exit stamp come from two threads woken by the same thread exit; either may
    /// print first, so a return this much before the exit stamp still counts as released by it.
    /// </summary>
    public const double PrintOrderSlackMs = 100;

    public static (IReadOnlyList<UiCall> Calls, double? WorkerExitMs) Parse(string output)
    {
        var calls = new List<UiCall>();
        var open = new Dictionary<string, int>();
        double? exit = null;
        foreach (Match m in MarkerLine().Matches(output))
        {
            var t = double.Parse(m.Groups["t"].Value, CultureInfo.InvariantCulture);
            var call = CallName().Match(m.Groups["rest"].Value) is { Success: true } c ? c.Groups[1].Value : "?";
            switch (m.Groups["event"].Value)
            {
                case "ui-call":
                    open[call] = calls.Count;
                    calls.Add(new UiCall(call, t, null));
                    break;
                case "ui-return" when open.Remove(call, out var i):
                    calls[i] = calls[i] with { EndMs = t };
                    break;
                case "worker-exit":
                    exit ??= t;
                    break;
            }
        }
        return (calls, exit);
    }

    /// <summary>
    /// Where a block's interval lies: wholly in the hang's window (reproduced), wholly at or under cleanMaxMs (clean),
    /// wholly outside both (between), or across an edge (undecided).
    /// </summary>
    public static Placement Place(HangSpec spec, Interval block)
    {
        var (low, high) = spec.Window;
        if (block.Low >= low && block.High <= high) return Placement.Reproduced;
        if (block.High <= spec.CleanMaxMs) return Placement.Clean;
        bool Inside(double x) => x <= spec.CleanMaxMs || (x >= low && x <= high);
        var edges = new[] { spec.CleanMaxMs, low, high }.Where(e => !double.IsInfinity(e));
        return !Inside(block.Low) && !Inside(block.High) && !edges.Any(e => block.Low < e && e < block.High) ? Placement.Between : Placement.Undecided;
    }

    /// <param name="judgeWindow">False when the caller places the block's interval in the window itself (the family does,
    /// over runs): the block's length then decides nothing here but clean or not.</param>
    public static HangVerdict Judge(HangSpec spec, string output, bool judgeWindow = true)
    {
        var (all, exit) = Parse(output);
        var callRe = new Regex(spec.Call);
        var calls = all.Where(c => callRe.IsMatch(c.Name)).ToList();
        var facts = new HangFacts(null, null, spec.ExpectedMs, null, exit is { } ex ? Math.Round(ex, 1) : null, null,
                                  calls.Select(c => c.EndMs is null ? $"{c.Name}: never returned" : $"{c.Name} {c.BlockedMs:0} ms").ToList(), []);
        if (calls.Count == 0)
            return new(Outcome.Error, $"no 'REPRO-REACHED ui-call … call=' marker matching /{spec.Call}/: the program does not follow the hang protocol", facts);
        var longest = calls.OrderByDescending(c => c.EndMs is null ? double.MaxValue : c.BlockedMs!.Value).First();
        if (longest.EndMs is null)
            return new(Outcome.WrongFailure, $"{longest.Name} at {longest.BeginMs:0} ms never returned", facts);
        var blocked = longest.BlockedMs!.Value;
        facts = facts with { Call = longest.Name, BlockMs = Math.Round(blocked, 1) };
        if (blocked <= spec.CleanMaxMs)
            return new(Outcome.Clean, $"no UI call blocked more than {spec.CleanMaxMs:0} ms (longest: {longest.Name} {blocked:0.0} ms)", facts);

        var missing = new List<string>();
        if (judgeWindow && blocked < spec.MinSec * 1000) missing.Add($"it blocked less than {spec.MinSec} s");
        if (judgeWindow && spec.ExpectedMs is { } e && Math.Abs(blocked - e) > spec.Tolerance * e)
            missing.Add($"not within {spec.Tolerance:P0} of the expected {e:0} ms");
        if (exit is null) missing.Add("no worker-exit marker");
        else
        {
            var afterExit = longest.EndMs!.Value - exit.Value;
            facts = facts with { ExitToReturnMs = Math.Round(afterExit, 1) };
            if (afterExit < -PrintOrderSlackMs || afterExit > spec.ReleaseSec * 1000)
                missing.Add($"it returned {afterExit:0} ms after the worker exited, not within {spec.ReleaseSec} s of it");
        }
        var evidence = spec.Evidence.Select(p => (p, m: new Regex(p, RegexOptions.Multiline).Match(output))).ToList();
        foreach (var (p, m) in evidence.Where(x => !x.m.Success)) missing.Add($"no evidence /{p}/");
        if (evidence.Count > 0) facts = facts with { Evidence = evidence.Where(x => x.m.Success).Select(x => x.m.Value.Trim()).ToList() };
        var what = $"{longest.Name} blocked {blocked:0} ms";
        if (missing.Count > 0) return new(Outcome.WrongFailure, $"{what}, but {string.Join("; ", missing)}", facts);
        return new(Outcome.Reproduced, $"{what}{(spec.ExpectedMs is { } x ? $" (expected {x:0} ± {spec.Tolerance:P0})" : "")}, returned "
                                       + $"{longest.EndMs - exit:0} ms after the worker exited; evidence: {spec.Evidence.Count} of {spec.Evidence.Count}", facts);
    }

    /// <summary>The longest ui-call → ui-return gap as the harness saw the lines arrive, beside the program's own stamps.</summary>
    public static double? HarnessBlockMs(IReadOnlyDictionary<string, double> markers)
    {
        double? best = null;
        foreach (var (line, t) in markers)
        {
            if (MarkerLine().Match(line) is not { Success: true } m || m.Groups["event"].Value != "ui-call") continue;
            var call = CallName().Match(m.Groups["rest"].Value).Groups[1].Value;
            var end = markers.Where(kv => kv.Key.StartsWith("REPRO-REACHED ui-return ") && kv.Key.Contains($"call={call}") && kv.Value >= t)
                             .Select(kv => (double?)kv.Value).Min();
            if (end is { } e && (best is null || (e - t) * 1000 > best)) best = Math.Round((e - t) * 1000, 0);
        }
        return best;
    }

    [GeneratedRegex(@"REPRO-REACHED (?<event>\S+) t_ms=(?<t>\d+(?:\.\d+)?)(?<rest>[^\r\n]*)")]
    private static partial Regex MarkerLine();

    [GeneratedRegex(@"\bcall=(\S+)")]
    private static partial Regex CallName();
}
