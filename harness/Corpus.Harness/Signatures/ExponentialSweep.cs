using System.Globalization;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// The complexity family's exponential shape: sizes run in order, one process each, until one ends at the budget
/// (killed and contained); log(metric) against n gives the factor per level. A clean compiler finishes every size
/// with times flat or polynomial. A timed capture is armed on every run, because which run will hang is known only
/// when it does; captures of runs that finished first are not asked for, so their misses are not errors.
/// </summary>
public static class ExponentialSweep
{
    /// <summary>Points above the floor needed to call growth exponential.</summary>
    public const int MinPoints = 3;

    /// <summary>A sweep that finishes and grows like n^k with k at most this is polynomial, so clean.</summary>
    public const double PolynomialMax = 3;

    public static async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        var cs = runs.Case;
        var cx = cs.Signature.Get<ComplexitySpec>("complexity")!;
        cell.SeriesMetric = cx.Metric;
        cell.SeriesUnit = cx.SizeUnit;
        var points = new List<(double N, double Seconds)>();
        long? killedAt = null;
        string? killedLabel = null, killedBy = null;
        double? growth = null, killedPeak = null, killedAtLeast = null;
        var pauses = new List<double[]>();
        var host = new HostMemory();
        var values = new Dictionary<long, List<double>>();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        foreach (var n in cx.Sizes.Order())
        {
            runs.Progress($"{cell.Key} n={n} …");
            var label = $"n{n}";
            var output = await runs.ExecuteAsync(n, label, cs.Timed, host.WatchAsync);
            var run = output.Run;
            var paused = Paused(cell, label);
            if (run.TimedOut || run.MemoryCapped)
            {
                (killedAt, killedLabel) = (n, label);
                // The size that hit the budget enters the fit at the time it had run (a lower bound): without it
                // the fit sees only the sizes below the hang.
                var start = cs.Timed is { } t ? output.Markers.Where(kv => kv.Key.Contains(t.Marker)).Select(kv => kv.Value).DefaultIfEmpty(0).Min() : 0;
                var atLeast = run.WallSeconds - start - paused;
                if (atLeast > cx.FloorSec)
                {
                    points.Add((n, atLeast));
                    killedAtLeast = Math.Round(atLeast, 2);
                }
                killedBy = run.TimedOut ? $"timeout {cs.Budget.TimeoutSec} s" : $"memory cap {cs.Budget.MemoryMB} MB";
                killedPeak = Math.Round(run.PeakBytes / 1048576.0, 1);
                if (GrowthMBPerSec(run.Memory) is { } rate) growth = Math.Round(rate, 1);
                break;
            }
            if (ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad)
                return new Verdict(Outcome.WrongFailure, $"run n={n} did not finish cleanly ({bad}); {ProcessMatch.Tail(run)}")
                       { Facts = Facts(null) };
            if (!output.Metrics.TryGet(cx.Metric, out var value))
                return new Verdict(Outcome.Error, $"run n={n} finished, but printed no METRIC '{cx.Metric}' named by field 'signature.complexity.metric' of case {cs.Id}");
            // A snapshot stops the process while it is written: that pause is not the parser's time.
            if (paused > 0) pauses.Add([n, Math.Round(paused, 3)]);
            value = Math.Max(value - paused, 1e-6);
            points.Add((n, value));
            values[n] = [value];
            runs.Progress($"{cell.Key} n={n}: {cx.Metric}={value:0.000}");
        }
        // Only the run that hung was meant to be captured.
        cell.RemoveCaptureErrors(e => killedLabel is null || !e.StartsWith(killedLabel + ":", StringComparison.Ordinal));
        // The factor's interval comes from the runs' own scatter: while it straddles a bound, the finished sizes above
        // the floor run once more (no capture), and the fastest run of each is its point. The killed size is a lower
        // bound with no replicate.
        var decide = cx.Decide;
        var killedPoint = killedAt is { } kn && killedAtLeast is { } kl ? points.Single(p => p.N == kn) : ((double N, double Seconds)?)null;
        List<(double N, double Seconds)> Points() =>
            [.. values.OrderBy(kv => kv.Key).Select(kv => ((double)kv.Key, kv.Value.Min())), .. killedPoint is { } k ? [k] : Array.Empty<(double, double)>()];
        (Interval Slope, double Sigma, int Df)? Look()
        {
            var finished = values.Where(kv => kv.Value.Min() > cx.FloorSec).OrderBy(kv => kv.Key).ToList();
            if (finished.Count + (killedPoint is null ? 0 : 1) < 2) return null;
            return Decision.ReplicateSlope(finished.Select(kv => ((double)kv.Key, (IReadOnlyList<double>)kv.Value.Select(v => Math.Log(v)).ToList())).ToList(),
                                           decide.LookConfidence, killedPoint is { } k ? [(k.N, Math.Log(k.Seconds))] : null);
        }
        var (measured, passes, stoppedBy) = (Look(), 1, "decided");
        var (outcome, detail) = Judge(cx, Points(), killedAt, cs.Budget, measured?.Slope);
        while (outcome == Outcome.Inconclusive)
        {
            if (passes >= decide.MaxRounds) { stoppedBy = $"maxRounds {decide.MaxRounds}"; break; }
            if (clock.Elapsed.TotalSeconds >= decide.BudgetSec) { stoppedBy = $"the {decide.BudgetSec:0} s budget"; break; }
            passes++;
            foreach (var n in values.Keys.Where(n => values[n].Min() > cx.FloorSec).Order().ToList())
            {
                runs.Progress($"{cell.Key} n={n} pass {passes} …");
                var again = await runs.ExecuteAsync(n, $"n{n}-pass{passes}", null);
                if (ProcessMatch.Mismatch(cs.Signature.Clean, again.Run) is null && again.Metrics.TryGet(cx.Metric, out var v)) values[n].Add(Math.Max(v, 1e-6));
            }
            measured = Look();
            (outcome, detail) = Judge(cx, Points(), killedAt, cs.Budget, measured?.Slope);
        }
        points = Points();
        foreach (var (n, y) in points) cell.Series.Add(new SeriesPoint(n, y));
        if (killedAt is not null && growth is { } g) detail += $"; memory grew {g} MB/s there";
        var above = points.Where(p => p.Seconds > cx.FloorSec).ToList();
        var fit = above.Count >= 2 ? ComplexityFit.SemiLog(above) : null;
        var facts = Facts(fit is null ? null : (Math.Round(ComplexityFit.MedianFactor(above), 3), Math.Round(fit.Factor, 3), Math.Round(fit.R2, 4)));
        if (measured is { } m)
        {
            var factor = new Interval(Math.Exp(m.Slope.Value), Math.Exp(m.Slope.Low), Math.Exp(m.Slope.High)) { Confidence = m.Slope.Confidence };
            facts = facts with
            {
                Decision = DecisionFacts.Of("factor per level", factor,
                    $"least squares of log {cx.Metric} on n through the fastest run of each size above the floor{(killedPoint is null ? "" : " and the killed size's lower bound")}; "
                    + $"its uncertainty pooled from the gaps to the next fastest and the line's misfit, {m.Sigma:0.###} (log) on {m.Df} degrees of freedom, Student's t",
                    cx.ReproducedMin, cx.CleanMax, true, Decision.Place(m.Slope, Math.Log(cx.ReproducedMin), Math.Log(cx.CleanMax)), passes, decide,
                    clock.Elapsed.TotalSeconds, outcome == Outcome.Inconclusive ? stoppedBy : "decided"),
            };
            if (outcome == Outcome.Inconclusive) detail = $"{facts.Decision.Undecided}; {detail}";
        }
        return new Verdict(outcome, detail)
        {
            Facts = facts, KeyFigures = facts.KeyFigures(), Plot = PlotScale.SemiLog,
            PlotLabel = facts.Slope is { } f ? $"×{f:0.00} per level" : "flat",
        };

        // The sweep's facts so far, with the fit when there is one.
        ComplexityFacts Facts((double Median, double LeastSquares, double R2)? fit) =>
            new(ComplexitySpec.Exponential, cx.Metric, cx.SizeUnit, points.Select(p => new[] { p.N, Math.Round(p.Seconds, 4) }).ToList(),
                fit?.Median, fit?.LeastSquares, fit?.R2, cx.ReproducedMin, cx.CleanMax)
            {
                KilledAt = killedAt, KilledBy = killedBy, KilledRunPeakMB = killedPeak, KilledAtLeast = killedAtLeast, MemoryGrowthMBs = growth,
                FloorSec = cx.FloorSec, CapturePauses = pauses, HostMemory = host.Facts(cs.Budget),
            };
    }

    private static double Paused(CellResult cell, string label)
    {
        return cell.CapturesNow().Where(c => c.Run == label).Sum(c => c.Seconds);
    }

    /// <summary>The verdict on exact points: the least-squares line through them, with no scatter to widen it.</summary>
    public static (Outcome, string) Judge(ComplexitySpec cx, IReadOnlyList<(double N, double Seconds)> points, long? killedAt, Budget budget)
    {
        var above = points.Where(p => p.Seconds > cx.FloorSec).ToList();
        if (above.Count < 2) return Judge(cx, points, killedAt, budget, null);
        var slope = ComplexityFit.SemiLog(above).Exponent;
        return Judge(cx, points, killedAt, budget, new Interval(slope, slope, slope));
    }

    /// <summary>
    /// The verdict on the fastest run of each size and the size that hit the budget (null: every size finished), with
    /// the interval of log(factor per level): reproduced only when the whole interval is at or above reproducedMin, clean
    /// by the factor only when it is all at or below cleanMax. Inconclusive while it straddles a bound; the sweep then
    /// measures more, and keeps that outcome when its budget is spent.
    /// </summary>
    public static (Outcome, string) Judge(ComplexitySpec cx, IReadOnlyList<(double N, double Seconds)> points, long? killedAt, Budget budget,
                                          Interval? logFactor)
    {
        var above = points.Where(p => p.Seconds > cx.FloorSec).ToList();
        var killed = killedAt is { } k ? $"n={k} killed at the budget ({budget.TimeoutSec} s, {budget.MemoryMB} MB)" : "every size finished";
        if (above.Count < 2 || logFactor is null)
        {
            var flat = $"flat: {above.Count} of {points.Count} sizes above the {cx.FloorSec} s floor; {killed}";
            return killedAt is null ? (Outcome.Clean, flat)
                : (Outcome.WrongFailure, $"{flat}, with no growth before it (a hang of another kind?)");
        }
        var fit = ComplexityFit.SemiLog(above);
        static string X(double d) => double.IsInfinity(d) ? "∞" : $"{Math.Exp(d):0.00}";
        var factor = logFactor.Low == logFactor.High ? $"×{Math.Exp(logFactor.Value):0.00}"
            : double.IsInfinity(logFactor.High) ? $"×{Math.Exp(logFactor.Value):0.00} (no interval yet)"
            : $"×{Math.Exp(logFactor.Value):0.00} [{X(logFactor.Low)}, {X(logFactor.High)}] at {logFactor.Confidence * 100:0.#}%";
        var facts = $"{factor} per level (least squares over {above.Count} sizes above {cx.FloorSec} s, r² {fit.R2:0.000}; "
                    + $"median over pairs ×{ComplexityFit.MedianFactor(above):0.00}); {killed}";
        var placement = Decision.Place(logFactor, Math.Log(cx.ReproducedMin), Math.Log(cx.CleanMax));
        if (killedAt is not null && above.Count >= MinPoints && placement == Placement.Reproduced && fit.R2 >= cx.MinR2)
            return (Outcome.Reproduced, $"exponential: {facts}");
        if (killedAt is null && placement == Placement.Clean) return (Outcome.Clean, $"not exponential: {facts}");
        // Polynomial growth also multiplies per level, less and less: a power law of low degree is not the bug.
        var degree = ComplexityFit.MedianPairSlope(above);
        if (killedAt is null && degree <= PolynomialMax)
            return (Outcome.Clean, $"polynomial: exponent {degree:0.00} ≤ {PolynomialMax} over n ({facts})");
        if (placement == Placement.Undecided && (killedAt is null || above.Count >= MinPoints))
            return (Outcome.Inconclusive, $"the factor straddles a bound (the bug ≥ {cx.ReproducedMin}, clean ≤ {cx.CleanMax}): {facts}");
        var why = killedAt is null ? $"factor above clean (≤ {cx.CleanMax}) but nothing hit the budget"
            : above.Count < MinPoints ? $"only {above.Count} sizes above the floor before the budget, {MinPoints} needed"
            : $"hit the budget, but the factor is below {cx.ReproducedMin} or r² below {cx.MinR2}";
        return (Outcome.WrongFailure, $"{why}: {facts}");
    }

    /// <summary>MB/s from the first memory sample of a run to its highest (the last one is taken after the kill).</summary>
    public static double? GrowthMBPerSec(IReadOnlyList<MemorySample> samples)
    {
        if (samples.Count < 2) return null;
        var top = samples.MaxBy(s => s.Bytes)!;
        if (top.Seconds - samples[0].Seconds < 0.5) return 0;
        return (top.Bytes - samples[0].Bytes) / 1048576.0 / (top.Seconds - samples[0].Seconds);
    }

    /// <summary>
    /// Host MemAvailable around the runs: the cap is the cgroup's, and this shows the host never lost more than it
    /// (other jobs move it too, so it is context, not a verdict).
    /// </summary>
    private sealed class HostMemory
    {
        private long _baseline = -1, _drop = -1;

        /// <summary>The largest fall of MemAvailable below its value at the start of a run, during that run.</summary>
        public async Task WatchAsync(ContainedProcess p)
        {
            var start = Available();
            lock (this) if (_baseline < 0) _baseline = start;
            while (!p.HasExited)
            {
                var now = Available();
                lock (this) _drop = Math.Max(_drop, start - now);
                await Task.Delay(100);
            }
        }

        /// <summary>Host-wide, context only: how far MemAvailable fell during the runs, beside the cell's own cap.</summary>
        public HostMemoryFacts? Facts(Budget budget)
        {
            lock (this) return _baseline < 0 || _drop < 0 ? null : new HostMemoryFacts(_baseline >> 20, Math.Max(0, _drop >> 20), budget.MemoryMB);
        }

        private static long Available()
        {
            foreach (var line in File.ReadLines("/proc/meminfo"))
                if (line.StartsWith("MemAvailable:", StringComparison.Ordinal))
                    return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) << 10;
            return 0;
        }
    }
}
