using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Sweep: each size in its own process, short runs repeated, then the growth of the metric against the size decides.
/// A timed capture gets an extra, untimed run at a size long enough to capture.
/// </summary>
public sealed class ComplexityFamily : ISignatureFamily
{
    public string Key => "complexity";
    public object ReadSpec(Fields f) => ComplexitySpec.Read(f);
    public bool SweepsSizes => true;

    // The verdict is a growth of measured times: nothing else that computes may run beside it.
    public CellLane Lane => CellLane.Timed;

    /// <summary>The shapes a sweep can take, by the manifest's complexity.shape.</summary>
    public static readonly IReadOnlyDictionary<string, Func<IRunLauncher, CellResult, Task<Verdict>>> Shapes =
        new Dictionary<string, Func<IRunLauncher, CellResult, Task<Verdict>>>
        {
            [ComplexitySpec.Power] = RunPowerAsync,
            [ComplexitySpec.Exponential] = ExponentialSweep.RunAsync,
        };

    public void Validate(CaseSpec cs, Fields c)
    {
        if (!cs.Args.Any(a => a.Contains("{n}"))) throw c.Error("a complexity signature needs '{n}' in the arguments", "args");
    }

    public Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell) => Shapes[runs.Case.Signature.Get<ComplexitySpec>(Key)!.Shape](runs, cell);

    /// <summary>Both slopes (exponents, or factors per level) with bootstrap intervals over the pair slopes.</summary>
    public CellComparison Compare(IReadOnlyList<Verdict> @base, IReadOnlyList<Verdict> @new)
    {
        var facts = @base.Concat(@new).Select(v => v.Facts).OfType<ComplexityFacts>().FirstOrDefault();
        if (facts is null) return Comparisons.OfOutcomes(@base, @new);
        var exponential = facts.Shape == ComplexitySpec.Exponential;
        // Exponential sweeps: only the sizes above the floor measure growth, as in the verdict.
        List<(double N, double Y)> Points(IReadOnlyList<Verdict> vs) =>
            vs.Select(v => v.Facts).OfType<ComplexityFacts>()
              .SelectMany(f => f.Points.Where(p => !exponential || p[1] > (f.FloorSec ?? 0)).Select(p => (p[0], p[1]))).ToList();
        var slope = Comparisons.Slopes(exponential ? "factor per level" : "exponent", Points(@base), Points(@new), exponential);
        return Comparisons.WithFigures(@base, @new, slope is null ? [] : [slope], exponential ? PlotScale.SemiLog : PlotScale.LogLog);
    }

    public object? ReadFacts(System.Text.Json.JsonElement facts) =>
        facts.ValueKind == System.Text.Json.JsonValueKind.Object && facts.TryGetProperty("shape", out _)
            ? System.Text.Json.JsonSerializer.Deserialize<ComplexityFacts>(facts, Report.FactsWriter.JsonOptions) : null;

    /// <summary>The capture run may grow the largest size by at most this factor.</summary>
    public const double MaxCaptureScale = 4;

    /// <summary>Runs per size at most, however short they are.</summary>
    public const int MaxRepeats = 5;

    /// <summary>Runs per size at least: a second run of a size is what shows how much its runs scatter.</summary>
    public const int MinRuns = 2;

    /// <summary>
    /// Power laws: the exponent of log(metric) against log(n), through each size's mean log metric, decided by its
    /// interval from the runs' own scatter about their size's mean (<see cref="Decision.MeanSlope"/>) against the
    /// bounds. Rounds over the sizes, not all runs of one size and then the next: a stretch of host load then slows a
    /// run of every size, not all runs of one. Short sizes are repeated (up to repeatUnderSec of runs, at most
    /// MaxRepeats). While the interval straddles a bound, one more round over every size, within the case's decide budget; still undecided
    /// when it is spent: inconclusive, with the figure, its interval and the bounds.
    /// </summary>
    private static async Task<Verdict> RunPowerAsync(IRunLauncher runs, CellResult cell)
    {
        var cs = runs.Case;
        var cx = cs.Signature.Get<ComplexitySpec>("complexity")!;
        var sizes = cx.Sizes.Order().ToList();
        cell.SeriesMetric = cx.Metric;
        cell.SeriesUnit = cx.SizeUnit;
        var spent = sizes.ToDictionary(n => n, _ => 0.0);
        // Each run's metric, and its calibration figure when the case names one.
        var values = sizes.ToDictionary(n => n, _ => new List<(double Metric, double Calibration)>());
        var repeats = sizes.ToDictionary(n => n, _ => 0);
        RunOutput? largest = null;
        var clock = System.Diagnostics.Stopwatch.StartNew();

        // One run of each size given, in order; the reason when one did not finish cleanly or printed no metric.
        async Task<Verdict?> RoundAsync(IEnumerable<long> due)
        {
            foreach (var n in due)
            {
                var rep = repeats[n]++;
                runs.Progress($"{cell.Key} n={n} rep {rep + 1} …");
                var output = await runs.ExecuteAsync(n, $"n{n}-rep{rep}", null);
                var run = output.Run;
                spent[n] += run.WallSeconds;
                if (ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad)
                    return new Verdict(Outcome.WrongFailure, $"run n={n} did not finish cleanly ({bad}); {ProcessMatch.Tail(run)}");
                var calibration = 1.0;
                if (!output.Metrics.TryGet(cx.Metric, out var value)
                    || cx.Calibration is { } c && !output.Metrics.TryGet(c, out calibration))
                {
                    var (name, field) = output.Metrics.Has(cx.Metric) ? (cx.Calibration, "calibration") : (cx.Metric, "metric");
                    return new Verdict(Outcome.Error, $"run n={n} finished, but printed no METRIC '{name}' named by field "
                                                      + $"'signature.complexity.{field}' of case {cs.Id} (it printed: "
                                                      + $"{(output.Metrics.IsEmpty ? "no METRIC line" : string.Join(", ", output.Metrics.Names))})");
                }
                // The capture run is sized from the fastest run at the largest size: the one that ended soonest after
                // the capture's marker, so the smallest window a snapshot may get.
                if (n == sizes[^1] && values[n].All(v => value < v.Metric)) largest = output;
                values[n].Add((Math.Max(value, 1e-6), Math.Max(calibration, 1e-6)));
            }
            return null;
        }

        // Every size at least twice: the runs' own scatter about their size's mean is the slope's uncertainty.
        for (var rep = 0; rep < MaxRepeats; rep++)
        {
            var due = sizes.Where(n => rep < MinRuns || spent[n] < cx.RepeatUnderSec).ToList();
            if (due.Count == 0) break;
            if (await RoundAsync(due) is { } failed) return failed;
        }
        var decide = cx.Decide;
        // The calibrated log metrics of each size, and the weight the calibration was given, at the latest look.
        var (logs, weight) = (new List<IReadOnlyList<double>>(), 0.0);
        // Each size's geometric mean: what the line is fitted through.
        List<(double N, double Seconds)> Points() => sizes.Select((n, i) => ((double)n, Math.Exp(logs[i].Average()))).ToList();
        (Interval Slope, double Sigma, int Df) measured = default;
        Interval Look()
        {
            (logs, weight) = Calibrated(sizes.Select(n => (IReadOnlyList<(double, double)>)values[n]).ToList(), cx.Calibration is not null);
            return (measured = Decision.MeanSlope(sizes.Select((n, i) => (Math.Log(n), logs[i])).ToList(), decide.LookConfidence,
                                                  estimated: weight > 0 ? 1 : 0)).Slope;
        }
        var (interval, looks) = (Look(), 1);
        string stoppedBy = "decided";
        while (Decision.Place(interval, cx.ReproducedMin, cx.CleanMax) == Placement.Undecided)
        {
            if (looks >= decide.MaxRounds) { stoppedBy = $"maxRounds {decide.MaxRounds}"; break; }
            if (clock.Elapsed.TotalSeconds >= decide.BudgetSec) { stoppedBy = $"the {decide.BudgetSec:0} s budget"; break; }
            runs.Progress($"{cell.Key} exponent {interval} straddles a bound: round {looks + 1} over every size …");
            if (await RoundAsync(sizes) is { } failed) return failed;
            (interval, looks) = (Look(), looks + 1);
        }
        var points = Points();
        foreach (var (n, y) in points)
        {
            cell.Series.Add(new SeriesPoint(n, y));
            runs.Progress($"{cell.Key} n={n}: {cx.Metric}={y:0.000}");
        }
        var fit = ComplexityFit.LogLog(points);
        var median = ComplexityFit.MedianPairSlope(points);
        long? captureN = null;
        var placement = Decision.Place(interval, cx.ReproducedMin, cx.CleanMax);
        if (cs.Timed is { } timed && placement != Placement.Undecided)
        {
            // Snapshots stop the process while they are written, so they get a run of their own that is not timed,
            // and that ends when they are taken.
            var n = CaptureSize(sizes[^1], largest!, timed, fit.Exponent, (long)cs.Budget.MemoryMB << 20);
            if (n != sizes[^1]) captureN = n;
            runs.Progress($"{cell.Key} n={n} capture run …");
            await runs.ExecuteAsync(n, $"capture-n{n}", timed, untilCaptured: true);
        }
        var decision = DecisionFacts.Of("exponent", interval,
                                        $"least squares through the mean log {cx.Metric} of each of {sizes.Count} sizes' {sizes.Sum(n => values[n].Count)} runs"
                                        + (cx.Calibration is { } cal ? $", each run's scaled by (the geometric mean {cal} of its size over its own)^{weight:0.00}" : "")
                                        + $"; its uncertainty from the runs' scatter about their size's mean, {measured.Sigma:0.###} (log) on "
                                        + $"{measured.Df} degrees of freedom, Student's t",
                                        cx.ReproducedMin, cx.CleanMax, true, placement, looks, decide, clock.Elapsed.TotalSeconds, stoppedBy);
        var text = $"exponent {decision.Interval}; median pair slope {median:0.00}, r² {fit.R2:0.000}{(looks > 1 ? $", {looks} rounds" : "")}";
        var facts = new ComplexityFacts(ComplexitySpec.Power, cx.Metric, cx.SizeUnit, points.Select(p => new[] { p.N, p.Seconds }).ToList(),
                                        Math.Round(fit.Exponent, 3), Math.Round(fit.Exponent, 3), Math.Round(fit.R2, 4), cx.ReproducedMin, cx.CleanMax)
                    { CaptureN = captureN, MedianPairSlope = Math.Round(median, 3), Decision = decision, Calibration = cx.Calibration,
                      CalibrationWeight = cx.Calibration is null ? null : Math.Round(weight, 3) };
        Verdict V(Outcome o, string d) => new(o, d)
            { Facts = facts, KeyFigures = facts.KeyFigures(), Plot = PlotScale.LogLog, PlotLabel = $"slope {fit.Exponent:0.00}" };
        return placement switch
        {
            Placement.Reproduced when fit.R2 >= cx.MinR2 => V(Outcome.Reproduced, $"exponent ≥ {cx.ReproducedMin} ({text})"),
            Placement.Reproduced => V(Outcome.WrongFailure, $"exponent ≥ {cx.ReproducedMin}, but not a power law: r² {fit.R2:0.000} < {cx.MinR2} ({text})"),
            Placement.Clean => V(Outcome.Clean, $"exponent ≤ {cx.CleanMax} ({text})"),
            Placement.Between => V(Outcome.WrongFailure, $"the exponent is neither clean (≤ {cx.CleanMax}) nor the bug (≥ {cx.ReproducedMin}) ({text})"),
            _ => V(Outcome.Inconclusive, decision.Undecided),
        };
    }

    /// <summary>
    /// Each size's log metrics, each run's scaled by (the geometric mean calibration figure of its size over its
    /// own)^w. The calibration times work of the same size in the same process: where the host ran a whole process
    /// slower (a busy sibling core: .NET's serialize and deserialize both 1.4 times slower), both move together and
    /// the scaled runs of a size close up about their mean, which the scaling leaves where it was. Where the metric's
    /// scatter is its own (Mono's collector), the calibration only adds its scatter. So w is as much of the pooled
    /// slope of log metric on log calibration within the sizes (analysis of covariance) as the runs surely show: its
    /// one-sided 95% lower bound, held to [0, 1]. On runs of 2026-11-27: 0.86 on .NET with a quiet host in two
    /// speeds, 0 on Mono; 0–0.4 on .NET in one speed, where the scaled runs scatter as the measured ones do. Without
    /// <paramref name="calibrate"/>: the log metrics as measured, w 0.
    /// </summary>
    public static (List<IReadOnlyList<double>> Logs, double Weight) Calibrated(IReadOnlyList<IReadOnlyList<(double Metric, double Calibration)>> sizes,
                                                                            bool calibrate)
    {
        double sxy = 0, sxx = 0, syy = 0;
        var df = -1;
        foreach (var runs in calibrate ? sizes.Where(r => r.Count >= 2) : [])
        {
            double mc = runs.Average(r => Math.Log(r.Calibration)), mm = runs.Average(r => Math.Log(r.Metric));
            foreach (var (m, c) in runs)
            {
                var (dc, dm) = (Math.Log(c) - mc, Math.Log(m) - mm);
                (sxy, sxx, syy) = (sxy + dc * dm, sxx + dc * dc, syy + dm * dm);
            }
            df += runs.Count - 1;
        }
        var w = 0.0;
        if (sxx > 0 && df >= 1)
        {
            var slope = sxy / sxx;
            var se = Math.Sqrt(Math.Max(0, syy - slope * sxy) / df / sxx);
            w = Math.Clamp(slope - StudentT.Quantile(0.95, df) * se, 0, 1);
        }
        return (sizes.Select(runs =>
        {
            var mean = runs.Average(r => Math.Log(r.Calibration));
            return (IReadOnlyList<double>)runs.Select(r => Math.Log(r.Metric) + w * (mean - Math.Log(r.Calibration))).ToList();
        }).ToList(), w);
    }

    /// <summary>
    /// The size of the capture run: the largest size, grown when the program spent too little time after the
    /// capture's marker for every snapshot to land (a fast runtime), within the memory budget. A snapshot stops the
    /// process while it is written, so the program's own time after the marker must cover the delay, the intervals
    /// and a margin for the core; any snapshot that still misses is a capture error.
    /// </summary>
    public static long CaptureSize(long largest, RunOutput run, TimedCapture timed, double exponent, long budgetBytes)
    {
        var marker = run.Markers.FirstOrDefault(kv => kv.Key.Contains(timed.Marker));
        if (marker.Key is null) return largest;
        var window = run.Run.WallSeconds - marker.Value;
        var needed = timed.DelaySec + (timed.Count - 1) * timed.IntervalSec + 0.5;
        if (window >= needed) return largest;
        var scale = Math.Min(MaxCaptureScale, needed / Math.Max(window, 0.05));
        // Memory grows with the size at least linearly: keep the estimate under 60% of the cap.
        if (run.Run.PeakBytes > 0) scale = Math.Min(scale, 0.6 * budgetBytes / run.Run.PeakBytes);
        if (scale <= 1) return largest;
        return (long)Math.Round(largest * Math.Pow(scale, 1 / Math.Max(exponent, 1.0)));
    }
}

/// <summary>Host-wide MemAvailable before a sweep and its largest fall during a run, beside the cell's cap: context
/// for a run killed at its memory cap, never a verdict.</summary>
public sealed record HostMemoryFacts(long AvailableBeforeMB, long AvailableDropMB, int MemoryCapMB);

/// <summary>
/// A sweep's facts. Power: <see cref="Slope"/> is the exponent of log(metric) against log(n), through each size's
/// geometric mean. Exponential: it is the factor per unit of n, from log(metric) against n, through each size's
/// fastest run. Both: the least-squares value, its r² and its interval (<see cref="Decision"/>, the verdict), and the
/// points (n, metric) the fit went through.
/// </summary>

public sealed record ComplexityFacts(string Shape, string Metric, string? SizeUnit, IReadOnlyList<double[]> Points, double? Slope,
                                     double? LeastSquares, double? R2, double ReproducedMin, double CleanMax)
{
    /// <summary>The deciding figure's interval against the bounds, at the last look.</summary>
    public DecisionFacts? Decision { get; init; }
    /// <summary>Power: the METRIC each run's metric was scaled by (see <see cref="ComplexityFamily.Calibrated"/>), which
    /// narrows the scatter about each size's mean and leaves the points, the sizes' geometric means, as measured.</summary>
    public string? Calibration { get; init; }
    /// <summary>The exponent w the calibration was given, 0 (none) to 1 (in full).</summary>
    public double? CalibrationWeight { get; init; }
    /// <summary>Theil–Sen's median pair slope beside the least-squares one, which decides.</summary>
    public double? MedianPairSlope { get; init; }
    public long? CaptureN { get; init; }
    /// <summary>Exponential: the size that ended at the budget.</summary>
    public long? KilledAt { get; init; }
    public string? KilledBy { get; init; }
    /// <summary>Exponential: metrics at or below this are startup noise and left out of the fit.</summary>
    public double? FloorSec { get; init; }
    public double? MemoryGrowthMBs { get; init; }
    /// <summary>Exponential: the killed run's peak memory, and the time it had run when killed (a lower bound).</summary>
    public double? KilledRunPeakMB { get; init; }
    public double? KilledAtLeast { get; init; }
    /// <summary>Sizes whose runs a snapshot paused, and for how long (n, seconds): taken off their metric.</summary>
    public IReadOnlyList<double[]> CapturePauses { get; init; } = [];
    public HostMemoryFacts? HostMemory { get; init; }

    private static string F(double? d, string format) => d?.ToString(format, System.Globalization.CultureInfo.InvariantCulture) ?? "—";

    public IReadOnlyList<string> KeyFigures()
    {
        var last = Points.Count == 0 ? null : Points[^1];
        var at = last is null ? null : $"{Metric}@{last[0]:0} {F(last[1], "0.###")}";
        if (Shape == ComplexitySpec.Power)
            return [Decision is { } d ? $"exponent {d.Interval} (r² {F(R2, "0.000")})" : $"exponent {F(Slope, "0.00")} (r² {F(R2, "0.000")})",
                    .. at is null ? Array.Empty<string>() : [at]];
        return [Slope is null ? "flat" : $"×{F(Slope, "0.00")} per level (least squares ×{F(LeastSquares, "0.00")}, r² {F(R2, "0.000")})",
                KilledAt is { } k ? $"n={k} killed ({KilledBy})" : "every size finished",
                .. MemoryGrowthMBs is { } g ? new[] { $"memory +{g:0.#} MB/s" } : [],
                .. at is null ? Array.Empty<string>() : [at]];
    }
}

/// <param name="SizeUnit">What {n} counts, for the plot's axis (e.g. "books").</param>
/// <param name="Shape">"power": exponents of log(metric) against log(n). "exponential": factors per unit of n, from
/// log(metric) against n; the largest sizes may end at the budget (see ExponentialSweep).</param>
/// <param name="FloorSec">Exponential only: metrics at or below this are noise (startup, JIT), not growth.</param>
/// <param name="Calibration">Power only: a METRIC of the same run that times fixed work at the size, by which each run's
/// metric is scaled (<see cref="ComplexityFamily.Calibrated"/>).</param>
public sealed record ComplexitySpec(string Metric, IReadOnlyList<long> Sizes, double ReproducedMin, double CleanMax,
                                    double MinR2, double RepeatUnderSec, string? SizeUnit = null, string Shape = "power",
                                    double FloorSec = 0.1, string? Calibration = null)
{
    /// <summary>Looks at the slope's interval while it straddles a bound: 3 within 240 s unless the case says otherwise.</summary>
    public static readonly DecideSpec DefaultDecide = new(3, 240);

    public DecideSpec Decide { get; init; } = DefaultDecide;

    public const string Power = "power", Exponential = "exponential";
    private static readonly Dictionary<string, string> ShapeNames = new() { [Power] = Power, [Exponential] = Exponential };

    public static ComplexitySpec Read(Fields f)
    {
        f.AllowOnly("metric", "sizes", "reproducedMin", "cleanMax", "minR2", "repeatUnderSec", "sizeUnit", "shape", "floorSec", "decide",
                    "calibration");
        var shape = f.Enum("shape", ShapeNames, Power, required: false);
        // Power: exponents in (0, 10]. Exponential: factors per unit of n, above 1 (growth) and at most 10.
        var min = shape == Exponential ? 1 : 0;
        var spec = new ComplexitySpec(f.String("metric"), f.PositiveIntegers("sizes"),
                                      f.NumberOr("reproducedMin", null, required: true, min: min, above: true, max: 10)!.Value,
                                      f.NumberOr("cleanMax", null, required: true, min: min, above: true, max: 10)!.Value,
                                      f.NumberOr("minR2", 0.9, min: 0, max: 1)!.Value,
                                      f.NumberOr("repeatUnderSec", 1.0, min: 0, max: 3600)!.Value,
                                      f.StringOr("sizeUnit", null), shape,
                                      f.NumberOr("floorSec", 0.1, min: 0, max: 3600)!.Value, f.StringOr("calibration", null))
                   { Decide = DecideSpec.Read(f, DefaultDecide) };
        if (spec.Sizes.Count < 3) throw f.Error("needs at least 3 sizes to fit a slope", "sizes");
        if (spec.Sizes.Distinct().Count() != spec.Sizes.Count) throw f.Error("sizes must be distinct", "sizes");
        if (spec.Calibration is { } cal && (shape != Power || cal == spec.Metric))
            throw f.Error(shape != Power ? "applies to power sweeps only" : "must name another METRIC than 'metric'", "calibration");
        if (spec.CleanMax >= spec.ReproducedMin)
            throw f.Error($"must be below reproducedMin ({spec.ReproducedMin})", "cleanMax");
        return spec;
    }
}
