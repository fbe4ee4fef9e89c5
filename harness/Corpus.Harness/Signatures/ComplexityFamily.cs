using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Sweep: each size in its own process, short runs repeated and the fastest kept, then the growth of the metric
/// against the size decides. A timed capture gets an extra, untimed run at a size long enough to capture.
/// </summary>
public sealed class ComplexityFamily : ISignatureFamily
{
    public string Name => "complexity";

    // The verdict is a growth of measured times: nothing else that computes may run beside it.
    public CellLane Lane => CellLane.Timed;
    public bool Runs(Signature signature) => signature.Complexity is not null;

    /// <summary>The capture run may grow the largest size by at most this factor.</summary>
    public const double MaxCaptureScale = 4;

    /// <summary>Runs per size at most, however short they are.</summary>
    public const int MaxRepeats = 5;

    public async Task RunAsync(ICellRuns runs, CellResult cell)
    {
        var cs = runs.Case;
        var cx = cs.Signature.Complexity!;
        if (cx.Shape == ComplexitySpec.Exponential)
        {
            await ExponentialSweep.RunAsync(runs, cell);
            return;
        }
        var sizes = cx.Sizes.Order().ToList();
        cell.SeriesMetric = cx.Metric;
        cell.SeriesUnit = cx.SizeUnit;
        var best = sizes.ToDictionary(n => n, _ => double.MaxValue);
        var spent = sizes.ToDictionary(n => n, _ => 0.0);
        RunOutput? largest = null;
        // Rounds over the sizes, not all runs of one size and then the next: a stretch of host load then slows one
        // run of several sizes, and the fastest of each size's runs leaves it out, instead of slowing every run of
        // one size and bending the slope. Short runs are repeated (up to RepeatUnderSec of runs, at most
        // MaxRepeats); the minimum is the run least disturbed by the host.
        for (var rep = 0; rep < MaxRepeats; rep++)
        {
            var due = sizes.Where(n => rep == 0 || spent[n] < cx.RepeatUnderSec).ToList();
            if (due.Count == 0) break;
            foreach (var n in due)
            {
                runs.Progress($"{cell.Key} n={n} rep {rep + 1} …");
                var output = await runs.ExecuteAsync(n, $"n{n}-rep{rep}", null);
                var run = output.Run;
                spent[n] += run.WallSeconds;
                if (ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad)
                {
                    cell.Outcome = Outcome.WrongFailure;
                    cell.Detail = $"run n={n} did not finish cleanly ({bad}); {ProcessMatch.Tail(run)}";
                    return;
                }
                if (!output.Metrics.TryGetValue(cx.Metric, out var value))
                {
                    cell.Outcome = Outcome.Error;
                    cell.Detail = $"run n={n} finished, but printed no METRIC '{cx.Metric}' named by field "
                                  + $"'signature.complexity.metric' of case {cs.Id} (it printed: "
                                  + $"{(output.Metrics.Count == 0 ? "no METRIC line" : string.Join(", ", output.Metrics.Keys))})";
                    return;
                }
                // The capture run is sized from the fastest run at the largest size: the one that ended soonest after
                // the capture's marker.
                if (n == sizes[^1] && value < best[n]) largest = output;
                best[n] = Math.Min(best[n], value);
            }
        }
        var points = new List<(double N, double Seconds)>();
        foreach (var n in sizes)
        {
            points.Add((n, Math.Max(best[n], 1e-6)));
            cell.Series.Add(new SeriesPoint(n, best[n]));
            runs.Progress($"{cell.Key} n={n}: {cx.Metric}={best[n]:0.000}");
        }
        // The verdict uses the outlier-resistant slope; the least-squares fit and its r² are kept beside it.
        var fit = ComplexityFit.LogLog(points);
        var exponent = ComplexityFit.MedianPairSlope(points);
        if (cs.Timed is { } timed)
        {
            // Snapshots stop the process while they are written, so they get a run of their own that is not timed,
            // and that ends when they are taken.
            var n = CaptureSize(sizes[^1], largest!, timed, exponent, (long)cs.Budget.MemoryMB << 20);
            if (n != sizes[^1]) cell.Metrics["capture_n"] = n;
            runs.Progress($"{cell.Key} n={n} capture run …");
            await runs.ExecuteAsync(n, $"capture-n{n}", timed, untilCaptured: true);
        }
        cell.Metrics["exponent"] = Math.Round(exponent, 3);
        cell.Metrics["ls_exponent"] = Math.Round(fit.Exponent, 3);
        cell.Metrics["r2"] = Math.Round(fit.R2, 4);
        cell.Metrics[$"{cx.Metric}@{sizes[^1]}"] = Math.Round(points[^1].Seconds, 4);
        var facts = $"median pair slope {exponent:0.00}; least squares {fit.Exponent:0.00}, r² {fit.R2:0.000}";
        if (exponent >= cx.ReproducedMin && fit.R2 >= cx.MinR2)
            (cell.Outcome, cell.Detail) = (Outcome.Reproduced, $"exponent {exponent:0.00} ≥ {cx.ReproducedMin} ({facts})");
        else if (exponent <= cx.CleanMax)
            (cell.Outcome, cell.Detail) = (Outcome.Clean, $"exponent {exponent:0.00} ≤ {cx.CleanMax} ({facts})");
        else
            (cell.Outcome, cell.Detail) = (Outcome.WrongFailure,
                $"exponent {exponent:0.00} is neither clean (≤ {cx.CleanMax}) nor the bug (≥ {cx.ReproducedMin}, r² ≥ {cx.MinR2}) ({facts})");
    }

    /// <summary>
    /// The size of the capture run: the largest size, grown when the program spent too little time after the
    /// capture's marker for the first snapshot to land (a fast runtime), within the memory budget. Each snapshot
    /// stops the process while it is written, so the later ones usually fit; any that do not are capture errors.
    /// </summary>
    public static long CaptureSize(long largest, RunOutput run, TimedCapture timed, double exponent, long budgetBytes)
    {
        var marker = run.Markers.FirstOrDefault(kv => kv.Key.Contains(timed.Marker));
        if (marker.Key is null) return largest;
        var window = run.Run.WallSeconds - marker.Value;
        var needed = timed.DelaySec + 0.5;
        if (window >= needed) return largest;
        var scale = Math.Min(MaxCaptureScale, needed / Math.Max(window, 0.05));
        // Memory grows with the size at least linearly: keep the estimate under 60% of the cap.
        if (run.Run.PeakBytes > 0) scale = Math.Min(scale, 0.6 * budgetBytes / run.Run.PeakBytes);
        if (scale <= 1) return largest;
        return (long)Math.Round(largest * Math.Pow(scale, 1 / Math.Max(exponent, 1.0)));
    }
}
