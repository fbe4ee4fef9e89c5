using System.Globalization;
using System.Text;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>report.md with one table of cells and a gnuplot log-log plot per complexity case.</summary>
public sealed class MarkdownReport(IToolRunner tools)
{
    public void Write(string runDir, string runId, IReadOnlyList<CellResult> cells, IReadOnlyList<string> inputErrors, double seconds)
    {
        var md = new StringBuilder();
        md.AppendLine($"# Corpus run {runId}").AppendLine();
        var failed = cells.Count(c => c.Gate is GateStatus.Regression or GateStatus.XPass or GateStatus.Mismatch);
        md.AppendLine($"{cells.Count} cells in {seconds:0} s; {failed} differ from expected/; {inputErrors.Count} input errors.").AppendLine();
        foreach (var e in inputErrors) md.AppendLine($"- **input error**: {e}");
        if (inputErrors.Count > 0) md.AppendLine();
        md.AppendLine("| repro | case | variant | subject | outcome | expected | gate | key metrics | detail |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var c in cells)
            md.AppendLine($"| {c.Key.Repro} | {c.Key.Case} | {c.Key.Variant} | {c.Key.Subject} | {c.Outcome.Name()} | "
                          + $"{c.Expected?.Outcome.Name() ?? "—"} | {c.Gate.ToString().ToLowerInvariant()} | "
                          + $"{ConsoleTable.KeyMetrics(c)} | {Escape(c.Detail)} |");
        md.AppendLine();
        foreach (var group in cells.Where(c => c.Series.Count > 0).GroupBy(c => (c.Key.Repro, c.Key.Case)))
        {
            var name = $"plot-{group.Key.Repro}-{group.Key.Case}";
            md.AppendLine($"## {group.Key.Repro}: {group.Key.Case}").AppendLine();
            var png = Plot(runDir, name, group.ToList());
            if (png is not null) md.AppendLine($"![{group.First().SeriesMetric} against n]({png})").AppendLine();
            md.AppendLine($"| subject | n | {group.First().SeriesMetric} | exponent | r² |").AppendLine("|---|---|---|---|---|");
            foreach (var c in group)
                foreach (var p in c.Series)
                    md.AppendLine($"| {c.Key.Subject} | {p.X:0} | {p.Y:0.000} | {c.Metrics.GetValueOrDefault("exponent")} | {c.Metrics.GetValueOrDefault("r2")} |");
            md.AppendLine();
        }
        foreach (var c in cells.Where(c => c.TimeSeries.Count > 0))
        {
            var name = $"time-{c.Key.Repro}-{c.Key.Case}-{c.Key.Variant}-{Slug(c.Key.Subject)}";
            md.AppendLine($"## {c.Key}: over time").AppendLine();
            if (PlotTime(runDir, name, c) is { } png) md.AppendLine($"![{c.Key} over time]({png})").AppendLine();
        }
        var captures = cells.SelectMany(c => c.Captures.Select(x => (c, x))).ToList();
        if (captures.Count > 0)
        {
            md.AppendLine("## Captures").AppendLine();
            md.AppendLine("| cell | backend | at (s) | size | write time (s) | top frames of the busiest thread |").AppendLine("|---|---|---|---|---|---|");
            foreach (var (c, x) in captures)
                md.AppendLine($"| {c.Key} | {x.Backend} | {x.AtSeconds:0.0} | {Size(x.Bytes)} | {x.Seconds:0.00} | {Escape(TopFrames(x))} |");
            md.AppendLine();
        }
        md.AppendLine("Re-run any cell with the `rerun` command in `summary.json`; cells that differ from expected/ keep their artifacts.");
        File.WriteAllText(Path.Combine(runDir, "report.md"), md.ToString());
    }

    private static string TopFrames(CaptureRecord x)
    {
        var t = x.Threads.OrderByDescending(t => t.Frames.Count).FirstOrDefault();
        return t is null ? x.Note ?? "" : $"{t.Thread}: " + string.Join(" ← ", t.Frames.Take(3));
    }

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
            "set terminal pngcairo size 900,500 font ',11'",
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
        for (var i = 0; i < cells.Count; i++)
        {
            var c = cells[i];
            dat.AppendLine($"# {c.Key.Subject}");
            foreach (var p in c.Series) dat.AppendLine(string.Format(inv, "{0} {1}", p.X, p.Y));
            dat.AppendLine().AppendLine();
            var exp = c.Metrics.TryGetValue("exponent", out var e) ? string.Format(inv, " (slope {0:0.00})", e) : "";
            plots.Add($"'{name}.dat' index {i} using 1:2 with linespoints lw 2 pt 7 title '{c.Key.Subject} {c.Key.Variant}{exp}'");
        }
        File.WriteAllText(Path.Combine(runDir, name + ".dat"), dat.ToString());
        var script = $"""
            set terminal pngcairo size 900,600 font ',11'
            set output '{name}.png'
            set logscale xy
            set grid
            set key top left
            set xlabel 'objects (n)'
            set ylabel '{cells[0].SeriesMetric} (seconds)'
            set title '{cells[0].Key.Repro}: {cells[0].Key.Case}, log-log'
            plot {string.Join(", \\\n     ", plots)}
            """;
        return RunGnuplot(runDir, name, script);
    }
}
