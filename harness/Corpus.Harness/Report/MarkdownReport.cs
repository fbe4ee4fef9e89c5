using System.Globalization;
using System.Text;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Report;

/// <summary>report.md with one table of cells and a gnuplot plot per sweep, on the axes its verdict names (log-log or semi-log).</summary>
/// <remarks>
/// The sweep keeps only the signature's metric in <see cref="CellResult.Series"/>; the plot and its table add the
/// program's other timings (e.g. serialize_s beside deserialize_s) from every run's METRIC numbers.
/// </remarks>
public sealed class MarkdownReport(IToolRunner tools)
{
    public void Write(string runDir, string runId, IReadOnlyList<CellResult> cells, IReadOnlyList<string> inputErrors, double seconds)
    {
        var md = new StringBuilder();
        md.AppendLine($"# Corpus run {runId}").AppendLine();
        var failed = cells.Count(c => c.Gate.Fails());
        md.AppendLine($"{cells.Count} cells in {seconds:0} s; {failed} differ from expected/; {inputErrors.Count} input errors.").AppendLine();
        // What the runs got beyond their manifests: --env, and runtime knobs the harness's own environment passed on.
        foreach (var (env, what) in new (Func<CellResult, IReadOnlyDictionary<string, string>?>, string)[]
                                     { (c => c.Env, "set with --env (ENV=)"), (c => c.InheritedEnv, "passed on from the harness's environment") })
        {
            var given = cells.Select(env).OfType<IReadOnlyDictionary<string, string>>()
                             .SelectMany(d => d).Select(kv => $"`{kv.Key}={kv.Value}`").Distinct().ToList();
            if (given.Count > 0) md.AppendLine($"Every run had {string.Join(", ", given)}, {what}.").AppendLine();
        }
        foreach (var e in inputErrors) md.AppendLine($"- **input error**: {e}");
        if (inputErrors.Count > 0) md.AppendLine();
        md.AppendLine("| repro | case | variant | subject | outcome | expected | gate | key figures | detail |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var c in cells)
            md.AppendLine($"| {c.Key.Repro} | {c.Key.Case} | {c.Key.Variant} | {c.Key.Subject} | {c.Outcome.Name()} | "
                          + $"{c.Expected?.Outcome.Name() ?? "—"} | {c.Gate.ToString().ToLowerInvariant()} | "
                          + $"{ConsoleTable.KeyMetrics(c)} | {Escape(c.Detail)} |");
        md.AppendLine();
        md.AppendLine("## Where the time went").AppendLine();
        foreach (var line in Timeline.Describe(cells, seconds)) md.AppendLine(line.StartsWith("  ") ? $"  - {line.Trim()}" : $"- {line}");
        md.AppendLine();
        foreach (var group in cells.Where(c => c.Series.Count > 0).GroupBy(c => (c.Key.Repro, c.Key.Case)))
        {
            var name = $"plot-{group.Key.Repro}-{group.Key.Case}";
            md.AppendLine($"## {group.Key.Repro}: {group.Key.Case}").AppendLine();
            var png = Plot(runDir, name, group.ToList());
            var graphs = group.SelectMany(c => c.Traces.Where(t => t.FlameGraph is not null).Select(t => (c, t))).ToList();
            if (graphs.Count == 0) { if (png is not null) md.AppendLine($"![{group.First().SeriesMetric} against n]({png})").AppendLine(); }
            else
            {
                // The sweep and where its time went, side by side: the plot, then each traced cell's flame graph.
                md.AppendLine("<table><tr>");
                if (png is not null) md.AppendLine($"<td valign=\"top\"><img src=\"{png}\" width=\"480\" alt=\"{group.First().SeriesMetric} against n\"></td>");
                foreach (var (c, t) in graphs)
                    md.AppendLine($"<td valign=\"top\">{c.Key.Subject}, n={t.N}: <a href=\"{Rel(runDir, t.FlameGraph!)}\">flame graph</a><br>"
                                  + $"<img src=\"{Rel(runDir, Path.ChangeExtension(t.FlameGraph!, null) + ".svg")}\" width=\"480\" alt=\"flame graph of {c.Key}\"></td>");
                md.AppendLine("</tr></table>").AppendLine();
            }
            var metrics = group.SelectMany(c => Curves(c).Keys).Distinct().ToList();
            var semiLog = Scale(group.First()) == PlotScale.SemiLog;
            md.AppendLine($"| subject | {SizeLabel(group.First())} | {string.Join(" | ", metrics)} |")
              .AppendLine("|---|---|" + string.Concat(metrics.Select(_ => "---|")));
            foreach (var c in group)
            {
                var curves = Curves(c);
                foreach (var x in curves.Values.SelectMany(v => v.Select(p => p.X)).Distinct().Order())
                    md.AppendLine($"| {c.Key.Subject} | {x:0} | " + string.Join(" | ", metrics.Select(k =>
                        curves.TryGetValue(k, out var pts) && pts.FirstOrDefault(p => p.X == x) is { } pt ? pt.Y.ToString("0.000", CultureInfo.InvariantCulture) : "")) + " |");
                md.AppendLine($"| {c.Key.Subject} | {(semiLog ? "factor per level" : "slope")} | " + string.Join(" | ", metrics.Select(k =>
                    curves.TryGetValue(k, out var pts) && Slope(pts, semiLog) is { } sl
                        ? semiLog ? $"×{sl.Factor:0.00} (r² {sl.R2:0.000})" : $"{sl.Exponent:0.00} (r² {sl.R2:0.000})" : "")) + " |");
            }
            md.AppendLine();
            md.AppendLine(semiLog
                ? $"The verdict uses {group.First().SeriesMetric}: its factor per level is the median over pairs of sizes above the floor "
                  + "(the first key figure above); the factors here are least-squares fits of log(time) against n, the killed size at the time it had run."
                : $"The verdict uses {group.First().SeriesMetric}: its exponent's interval is the `exponent` in the table above; "
                  + "the slopes here are least-squares fits, each point the geometric mean of that size's runs.").AppendLine();
        }
        foreach (var c in cells.Where(c => c.TimeSeries.Count > 0))
        {
            var name = $"time-{c.Key.Repro}-{c.Key.Case}-{c.Key.Variant}-{Slug(c.Key.Subject)}";
            md.AppendLine($"## {c.Key}: over time").AppendLine();
            if (PlotTime(runDir, name, c) is { } png) md.AppendLine($"![{c.Key} over time]({png})").AppendLine();
        }
        var traces = cells.SelectMany(c => c.Traces.Select(t => (c, t))).ToList();
        if (traces.Count > 0)
        {
            md.AppendLine("## Traces").AppendLine();
            md.AppendLine("| cell | run | backend | samples | events | size | wall ×untraced | metric ×untraced | flame graph | speedscope |")
              .AppendLine("|---|---|---|---|---|---|---|---|---|---|");
            foreach (var (c, t) in traces)
                md.AppendLine($"| {c.Key} | {t.Run} | {t.Backend} | {t.Samples} | {t.Events} | {Size(t.Bytes)} | "
                              + $"{(t.Slowdown is { } w ? $"×{w:0.00}" : "—")} | {(t.MetricSlowdown is { } m ? $"×{m:0.00}" : "—")} | "
                              + $"{(t.FlameGraph is { } g ? $"[html]({Rel(runDir, g)})" : t.Error is { } e ? Escape(e) : "—")} | "
                              + $"{(t.Speedscope is { } sp ? $"[json]({Rel(runDir, sp)})" : "—")} |");
            md.AppendLine();
        }
        var captures = cells.SelectMany(c => c.Captures.Select(x => (c, x))).ToList();
        if (captures.Count > 0)
        {
            md.AppendLine("## Captures").AppendLine();
            md.AppendLine("| cell | run | backend | at (s) | size | write time (s) | thread | top frames |").AppendLine("|---|---|---|---|---|---|---|---|");
            foreach (var (c, x) in captures)
            {
                var (thread, frames) = Thread(x);
                md.AppendLine($"| {c.Key} | {RunOf(c, x)} | {x.Backend} | {x.AtSeconds:0.0} | {Size(x.Bytes)} | {x.Seconds:0.00} | "
                              + $"{Escape(thread)} | {Escape(frames)} |");
            }
            md.AppendLine();
        }
        // Evidence the manifest asked for and that was not captured is said here, not left out.
        var missed = cells.SelectMany(c => c.CaptureErrors.Select(e => (c, e))).ToList();
        if (missed.Count > 0)
        {
            md.AppendLine("## Capture errors").AppendLine();
            md.AppendLine("| cell | what was asked for and not captured |").AppendLine("|---|---|");
            foreach (var (c, e) in missed) md.AppendLine($"| {c.Key} | {Escape(e)} |");
            md.AppendLine();
        }
        var capped = cells.SelectMany(c => c.Captures.Where(x => x.DeletedOverCap)).Count();
        if (capped > 0) md.AppendLine($"{capped} core(s) over the {RunOptions.DefaultMaxCoreMB} MB cap for kept cores were deleted after reading.").AppendLine();
        md.AppendLine("Re-run any cell with the `rerun` command in `summary.json`; cells that differ from expected/ keep their artifacts.");
        File.WriteAllText(Path.Combine(runDir, "report.md"), md.ToString());
    }

    private static string Rel(string runDir, string path) => Path.GetRelativePath(runDir, path).Replace('\\', '/');

    /// <summary>
    /// The thread a capture is about: the crashing one when the capture holds a crash (marked "crashing"), else the
    /// thread with the deepest stack, the one doing the work in a timed snapshot.
    /// </summary>
    private static (string Thread, string Frames) Thread(CaptureRecord x)
    {
        var crashing = x.Threads.FirstOrDefault(t => t.Crashing);
        if (crashing is not null)
        {
            var others = x.Threads.Where(t => t != crashing).Select(t => t.Thread.Split(' ', 3)[..2]).Select(a => string.Join(' ', a)).Distinct();
            var name = $"**crashing**: {crashing.Thread.Replace(" (aborting)", "")}";
            var also = others.Any() ? $"; the same pointer was freed before by {string.Join(", ", others)}" : "";
            return (name + also, Top(crashing));
        }
        var busiest = x.Threads.OrderByDescending(t => t.Frames.Count).FirstOrDefault();
        return busiest is null ? ("—", x.Note ?? "") : ($"busiest: {busiest.Thread}", Top(busiest));
    }

    // Mono stops a thread for SIGQUIT at a safepoint poll; the method that reached the poll is the real top frame.
    private static string Top(ThreadStack t) =>
        string.Join(" ← ", t.Frames.Where(f => !f.Contains("mono_threads_state_poll", StringComparison.Ordinal)).Take(3));

    /// <summary>Which run a capture came from: its own run folder (crash cores), or the run that took the snapshots.</summary>
    private static string RunOf(CellResult c, CaptureRecord x)
    {
        if (x.Run is { } run) return run;
        // A crash capture lives in its run's own folder (.../run0004/core).
        var folders = x.File.Split(Path.DirectorySeparatorChar);
        if (c.Runs.FirstOrDefault(r => folders.Contains(r.Label)) is { } own) return own.Label;
        var taking = c.Runs.Where(r => r.CaptureOnly).ToList();
        if (taking.Count == 1) return taking[0].Label;
        return c.Runs.Count == 1 ? c.Runs[0].Label : "—";
    }

    /// <summary>
    /// Every timing the program reported, per size: the sweep's own metric from the series, and the other METRIC
    /// numbers with the same unit suffix (e.g. serialize_s beside deserialize_s) from the runs, per size as the sweep's
    /// own points are: the geometric mean of a power sweep's runs, an exponential sweep's fastest run.
    /// </summary>
    private static Dictionary<string, List<SeriesPoint>> Curves(CellResult c)
    {
        var curves = new Dictionary<string, List<SeriesPoint>>();
        if (c.SeriesMetric is not { } main) return curves;
        curves[main] = c.Series.ToList();
        var suffix = main.Contains('_') ? main[main.LastIndexOf('_')..] : null;
        if (suffix is null) return curves;
        var bySize = c.Runs.Where(r => !r.CaptureOnly && r.N is not null);
        var exponential = Scale(c) == PlotScale.SemiLog;
        foreach (var key in c.Runs.SelectMany(r => r.Metrics.Names).Distinct().Where(k => k != main && k.EndsWith(suffix, StringComparison.Ordinal)).Order())
        {
            var pts = bySize.Select(r => (n: (double)r.N!.Value, ok: r.Metrics.TryGet(key, out var y), y))
                            .Where(p => p.ok)
                            .GroupBy(p => p.n)
                            .Select(g => new SeriesPoint(g.Key, exponential ? g.Min(p => p.y) : Math.Exp(g.Average(p => Math.Log(Math.Max(p.y, 1e-6))))))
                            .OrderBy(p => p.X).ToList();
            if (pts.Count > 0) curves[key] = pts;
        }
        return curves;
    }

    private static ComplexityFit? Slope(List<SeriesPoint> pts, bool semiLog)
    {
        var usable = pts.Where(p => p.X > 0 && p.Y > 0).Select(p => (p.X, p.Y)).ToList();
        if (usable.Select(p => p.X).Distinct().Count() < 2) return null;
        return semiLog ? ComplexityFit.SemiLog(usable) : ComplexityFit.LogLog(usable);
    }

    private static PlotScale Scale(CellResult c) => c.Verdict?.Plot is { } p and not PlotScale.None ? p : PlotScale.LogLog;

    /// <summary>
    /// The x axis: the {n} the case passes to the program. The manifest has no unit for it yet (books, objects…),
    /// so the label names the argument rather than guess one.
    /// </summary>
    private static string SizeLabel(CellResult c) =>
        c.SeriesUnit is { } unit ? $"{unit} (n)" : $"n, the size argument {{n}} of case {c.Key.Case}";

    private static string Size(long bytes) => bytes >= 1 << 20 ? $"{bytes / 1048576.0:0.0} MB" : $"{bytes / 1024.0:0.0} KB";

    private static string Escape(string s) => s.Replace("|", "\\|").Replace("\n", " ");

    private static string Slug(string s) => new(s.Select(ch => char.IsLetterOrDigit(ch) || ch is '-' or '.' ? ch : '_').ToArray());

    /// <summary>Curves against run time, e.g. system Shmem against process RSS: the gap is memory no process owns.</summary>
    private string? PlotTime(string runDir, string name, CellResult c)
    {
        var inv = CultureInfo.InvariantCulture;
        var dat = new StringBuilder();
        var plots = new List<string>();
        var i = 0;
        foreach (var (label, points) in c.TimeSeries)
        {
            dat.AppendLine($"# {label}");
            foreach (var p in points) dat.AppendLine(string.Format(inv, "{0} {1}", p.X, p.Y));
            dat.AppendLine().AppendLine();
            plots.Add($"'{name}.dat' index {i++} using 1:2 with lines lw 2 title '{label}'");
        }
        File.WriteAllText(Path.Combine(runDir, name + ".dat"), dat.ToString());
        var script = string.Join("\n",
            "set terminal pngcairo size 900,500 font ',11' noenhanced",
            $"set output '{name}.png'",
            "set grid",
            "set key top left",
            "set xlabel 'seconds since start'",
            "set ylabel 'MB'",
            $"set title '{c.Key}'",
            $"plot {string.Join(", \\\n     ", plots)}");
        return RunGnuplot(runDir, name, script);
    }

    private string? RunGnuplot(string runDir, string name, string script)
    {
        File.WriteAllText(Path.Combine(runDir, name + ".gp"), script + "\n");
        if (Subject.Which("gnuplot") is null) return null;
        var r = tools.Run("gnuplot", ["-e", $"cd '{runDir}'", name + ".gp"], TimeSpan.FromMinutes(1));
        return r.ExitCode == 0 && File.Exists(Path.Combine(runDir, name + ".png")) ? name + ".png" : null;
    }

    /// <summary>Writes the data and a gnuplot script beside the PNG, so a workshop can restyle the plot.</summary>
    private string? Plot(string runDir, string name, IReadOnlyList<CellResult> cells)
    {
        var inv = CultureInfo.InvariantCulture;
        var dat = new StringBuilder();
        var plots = new List<string>();
        var xs = new List<double>();
        var index = 0;
        for (var i = 0; i < cells.Count; i++)
        {
            var c = cells[i];
            var color = i + 1;
            foreach (var (metric, points) in Curves(c))
            {
                dat.AppendLine($"# {c.Key.Subject} {metric}");
                foreach (var p in points) dat.AppendLine(string.Format(inv, "{0} {1}", p.X, p.Y));
                dat.AppendLine().AppendLine();
                xs.AddRange(points.Select(p => p.X));
                var own = metric == c.SeriesMetric;
                var semi = Scale(c) == PlotScale.SemiLog;
                var fitted = Slope(points, semi);
                var slope = own && c.Verdict?.PlotLabel is { } label ? label
                    : fitted is null ? ""
                    : semi ? string.Format(inv, "×{0:0.00} per level", fitted.Factor) : string.Format(inv, "slope {0:0.00}", fitted.Exponent);
                plots.Add($"'{name}.dat' index {index++} using 1:2 with linespoints lw 2 lc {color} "
                          + $"{(own ? "dt 1 pt 7" : "dt 2 pt 6")} title '{c.Key.Subject} {metric} ({slope})'");
            }
        }
        File.WriteAllText(Path.Combine(runDir, name + ".dat"), dat.ToString());
        // A little room either side of the data; gnuplot's own autoscale rounds a log axis out to the next decade.
        // and a tic at each measured size, since a log axis over less than a decade gets at most one labelled tic.
        var xrange = xs.Count == 0 ? "" : string.Format(inv, "set xrange [{0}:{1}]; set xtics ({2}); set format x '%.0f'",
                                                        xs.Min() / 1.15, xs.Max() * 1.15,
                                                        string.Join(", ", xs.Distinct().Order().Select(x => x.ToString(inv))));
        var script = $"""
            set terminal pngcairo size 900,600 font ',11' noenhanced
            set output '{name}.png'
            {(Scale(cells[0]) == PlotScale.SemiLog ? "set logscale y" : "set logscale xy")}
            set grid
            set key top left
            {xrange}
            set xlabel '{SizeLabel(cells[0])}'
            set ylabel 'seconds (solid: {cells[0].SeriesMetric}, the verdict; dashed: other timings)'
            set title '{cells[0].Key.Repro}: {cells[0].Key.Case}, {(Scale(cells[0]) == PlotScale.SemiLog ? "semi-log: a straight line is exponential growth" : "log-log")}'
            plot {string.Join(", \\\n     ", plots)}
            """;
        return RunGnuplot(runDir, name, script);
    }
}
