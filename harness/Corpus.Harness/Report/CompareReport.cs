using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Xml.Linq;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Report;

/// <summary>
/// What `corpus compare` writes: the console table, compare.json (schema in docs/architecture.md), JUnit XML (a
/// regression is a failing test) and compare.md with plots of both subjects on one axis (gnuplot, as report.md).
/// </summary>
public static class CompareReport
{
    public const int SchemaVersion = 1;
    public const string JsonName = "compare.json", JUnitName = "junit.xml", MarkdownName = "compare.md";

    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public static string Name(CompareVerdict v) => v.ToString().ToLowerInvariant();

    private static string Outcomes(IReadOnlyList<CellResult> rounds) =>
        rounds.Select(c => c.Outcome).Distinct().Count() == 1 ? rounds[0].Outcome.Name() + (rounds.Count > 1 ? $" ×{rounds.Count}" : "")
            : string.Join("/", rounds.Select(c => c.Outcome.Name()));

    public static string Figures(ComparedCell c) => string.Join("; ", c.Comparison.Figures.Select(f => f.ToString()));

    public static string Table(CompareResult r)
    {
        string[] head = ["repro:case", "variant", "family", $"base {r.Base}", $"new {r.New}", "verdict", "figures (base → new)"];
        var rows = r.Cells.Select(c => new[]
        {
            $"{c.Repro}:{c.Case}", c.Variant, c.Family, Outcomes(c.Base), Outcomes(c.New),
            c.Comparison.Verdict == CompareVerdict.Regressed ? "REGRESSED" : Name(c.Comparison.Verdict), Figures(c),
        }).ToList();
        var widths = head.Select((h, i) => Math.Max(h.Length, rows.Select(x => x[i].Length).DefaultIfEmpty(0).Max())).ToArray();
        string Line(string[] x) => string.Join("  ", x.Select((s, i) => i == x.Length - 1 ? s : s.PadRight(widths[i]))).TrimEnd();
        var lines = new List<string> { Line(head), Line(widths.Select(w => new string('-', w)).ToArray()) };
        lines.AddRange(rows.Select(Line));
        foreach (var c in r.Cells)
        {
            lines.Add("");
            lines.Add($"{c.Key}: {Name(c.Comparison.Verdict)}: {c.Comparison.Detail}");
            lines.Add($"  runs:     {c.Rounds} round(s) per subject, {c.Seconds:0.#} s; budget: {c.Plan.Budget}");
            foreach (var (side, cells) in new[] { (r.Base, c.Base), (r.New, c.New) })
                lines.Add($"  {side}{(cells.Count > 1 ? $" (round {cells.Count})" : "")}: {cells[^1].Outcome.Name()}: {cells[^1].Detail}");
            if (c.Comparison.Verdict == CompareVerdict.Regressed)
                foreach (var cell in c.New.Where(x => x.ArtifactDir is not null).Take(1)) lines.Add($"  artifacts: {cell.ArtifactDir}");
        }
        if (r.OneSided.Count > 0)
        {
            lines.Add("");
            lines.Add("Cells only one subject can run (not compared):");
            lines.AddRange(r.OneSided.Select(o => $"  {o.Repro}:{o.Case}/{o.Variant} only on {o.Subject}; {o.Other}: {o.Reason}"));
        }
        return string.Join(Environment.NewLine, lines);
    }

    public static string Totals(CompareResult r) =>
        $"compare {r.Base} → {r.New}: {r.Cells.Count} cells: "
        + string.Join(", ", Enum.GetValues<CompareVerdict>().Select(v => $"{r.Count(v)} {Name(v)}"))
        + $"; {r.OneSided.Count} on one subject only; {r.InputErrors.Count} input errors; {r.Seconds:0} s.";

    private static object? Json(Interval? i) => i is null ? null
        : new { value = Math.Round(i.Value, 4), low = Math.Round(i.Low, 4), high = Math.Round(i.High, 4), confidence = i.Confidence };

    public static object Json(CompareResult r, string root)
    {
        object Side(string subject, IReadOnlyList<CellResult> cells) => new
        {
            subject,
            outcome = Comparisons.Pooled(cells.Select(Compare.VerdictOf).ToList())?.Name(),
            rounds = cells.Select(c => new
            {
                outcome = c.Outcome.Name(), detail = c.Detail, keyFigures = c.KeyFigures, seconds = c.Seconds, gate = c.Gate.ToString().ToLowerInvariant(),
                facts = c.RecordDir is null ? null : Path.GetRelativePath(root, Path.Combine(c.RecordDir, FactsWriter.FileName)),
                rerun = c.Rerun,
            }),
        };
        return new Dictionary<string, object?>
        {
            ["schema"] = SchemaVersion,
            ["runId"] = r.RunId,
            ["base"] = r.Base,
            ["new"] = r.New,
            ["host"] = Environment.MachineName,
            ["seconds"] = Math.Round(r.Seconds, 1),
            ["counts"] = Enum.GetValues<CompareVerdict>().ToDictionary(Name, r.Count),
            ["regressed"] = r.Count(CompareVerdict.Regressed) > 0,
            ["cells"] = r.Cells.Select(c => new Dictionary<string, object?>
            {
                ["repro"] = c.Repro, ["case"] = c.Case, ["variant"] = c.Variant, ["family"] = c.Family,
                ["verdict"] = Name(c.Comparison.Verdict), ["detail"] = c.Comparison.Detail, ["decided"] = c.Comparison.Decided,
                ["rounds"] = c.Rounds, ["budget"] = c.Plan.Budget, ["seconds"] = c.Seconds,
                ["figures"] = c.Comparison.Figures.Select(f => new
                {
                    name = f.Name, @base = Json(f.Base), @new = Json(f.New), effect = f.Effect, change = Json(f.Change),
                    p = f.P is { } p ? Math.Round(p, 6) : (double?)null, differs = f.Differs, note = f.Note,
                }),
                ["base"] = Side(r.Base, c.Base),
                ["new"] = Side(r.New, c.New),
            }),
            ["oneSided"] = r.OneSided.Select(o => new { repro = o.Repro, @case = o.Case, variant = o.Variant, subject = o.Subject, reason = $"{o.Other}: {o.Reason}" }),
            ["inputErrors"] = r.InputErrors,
        };
    }

    /// <summary>One testsuite per repro, one testcase per compared cell: regressed fails, inconclusive and one-sided cells are skipped.</summary>
    public static XDocument JUnit(CompareResult r)
    {
        var suites = new XElement("testsuites", new XAttribute("name", $"compare {r.Base} → {r.New}"));
        var all = r.Cells.Select(c => (c.Repro, Cell: (ComparedCell?)c, One: (OneSidedCell?)null))
                   .Concat(r.OneSided.Select(o => (o.Repro, Cell: (ComparedCell?)null, One: (OneSidedCell?)o)));
        foreach (var group in all.GroupBy(x => x.Repro))
        {
            var suite = new XElement("testsuite", new XAttribute("name", group.Key), new XAttribute("tests", group.Count()),
                                     new XAttribute("failures", group.Count(x => x.Cell?.Comparison.Verdict == CompareVerdict.Regressed)),
                                     new XAttribute("skipped", group.Count(x => x.Cell is null || x.Cell.Comparison.Verdict == CompareVerdict.Inconclusive)),
                                     new XAttribute("time", group.Sum(x => x.Cell?.Seconds ?? 0).ToString(Inv)));
            foreach (var (_, c, o) in group)
            {
                var tc = new XElement("testcase", new XAttribute("classname", $"{group.Key}.{c?.Case ?? o!.Case}"),
                                      new XAttribute("name", $"{c?.Variant ?? o!.Variant}: {r.Base} → {r.New}"),
                                      new XAttribute("time", (c?.Seconds ?? 0).ToString(Inv)));
                if (o is not null) tc.Add(new XElement("skipped", new XAttribute("message", $"only {o.Subject} can run it; {o.Other}: {o.Reason}")));
                else if (c!.Comparison.Verdict == CompareVerdict.Regressed)
                    tc.Add(new XElement("failure", new XAttribute("message", $"regressed: {c.Comparison.Detail}"),
                                        $"{Figures(c)}\nbase {r.Base}: {c.Base[^1].Detail}\nnew {r.New}: {c.New[^1].Detail}\nre-run: {c.New[^1].Rerun}"));
                else if (c.Comparison.Verdict == CompareVerdict.Inconclusive)
                    tc.Add(new XElement("skipped", new XAttribute("message", $"inconclusive: {c.Comparison.Detail}")));
                if (c is not null) tc.Add(new XElement("system-out", $"{Name(c.Comparison.Verdict)}: {c.Comparison.Detail}\n{Figures(c)}"));
                suite.Add(tc);
            }
            suites.Add(suite);
        }
        if (r.InputErrors.Count > 0)
            suites.Add(new XElement("testsuite", new XAttribute("name", "inputs"), new XAttribute("tests", r.InputErrors.Count),
                                    new XAttribute("failures", r.InputErrors.Count),
                                    r.InputErrors.Select(e => new XElement("testcase", new XAttribute("name", e.Split(':')[0]),
                                                                           new XElement("failure", new XAttribute("message", e))))));
        return new XDocument(suites);
    }

    public static void Write(string runDir, CompareResult r, string root, IToolRunner tools)
    {
        File.WriteAllText(Path.Combine(runDir, JsonName), JsonSerializer.Serialize(Json(r, root), SummaryWriter.JsonOptions));
        JUnit(r).Save(Path.Combine(runDir, JUnitName));
        File.WriteAllText(Path.Combine(runDir, MarkdownName), Markdown(runDir, r, tools));
    }

    private static string Escape(string s) => s.Replace("|", "\\|").Replace("\n", " ");

    private static string Slug(string s) => new(s.Select(ch => char.IsLetterOrDigit(ch) || ch is '-' or '.' ? ch : '_').ToArray());

    public static string Markdown(string runDir, CompareResult r, IToolRunner? tools)
    {
        var md = new StringBuilder();
        md.AppendLine($"# Compare {r.Base} (base) with {r.New} (new): run {r.RunId}").AppendLine();
        md.AppendLine(Totals(r)).AppendLine();
        md.AppendLine("Verdicts: `fixed` reproduced on base, clean on new; `regressed` clean on base, reproduced (or failing another "
                      + "way) on new; `changed` the same outcome with a figure beyond its interval and noise floor; `unchanged`; "
                      + "`inconclusive` a side that could not be judged, rounds that disagree, or a test the budget left undecided.").AppendLine();
        foreach (var e in r.InputErrors) md.AppendLine($"- **input error**: {e}");
        md.AppendLine($"| repro | case | variant | family | base {r.Base} | new {r.New} | verdict | figures (base → new, with intervals: 95% unless the figure says less) | runs |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|");
        foreach (var c in r.Cells)
            md.AppendLine($"| {c.Repro} | {c.Case} | {c.Variant} | {c.Family} | {Outcomes(c.Base)} | {Outcomes(c.New)} | "
                          + $"**{Name(c.Comparison.Verdict)}** | {Escape(Figures(c))} | {c.Rounds} round(s), {c.Seconds:0.#} s |");
        md.AppendLine();
        if (r.OneSided.Count > 0)
        {
            md.AppendLine("## On one subject only").AppendLine();
            foreach (var o in r.OneSided) md.AppendLine($"- {o.Repro}:{o.Case}/{o.Variant}: only {o.Subject}; {o.Other}: {Escape(o.Reason)}");
            md.AppendLine();
        }
        foreach (var c in r.Cells)
        {
            md.AppendLine($"## {c.Key}: {Name(c.Comparison.Verdict)}").AppendLine();
            md.AppendLine(Escape(c.Comparison.Detail)).AppendLine();
            md.AppendLine($"Budget: {c.Plan.Budget}; ran {c.Rounds} round(s) per subject.").AppendLine();
            foreach (var (side, cells) in new[] { ($"base {r.Base}", c.Base), ($"new {r.New}", c.New) })
                md.AppendLine($"- {side}: {Escape(string.Join(" | ", cells.Select(x => $"{x.Outcome.Name()}: {x.Detail}")))}");
            md.AppendLine();
            var name = $"compare-{Slug(c.Repro)}-{Slug(c.Case)}-{Slug(c.Variant)}";
            var png = tools is null ? null
                : c.Comparison.Plot != PlotScale.None && c.Base.Concat(c.New).Any(x => x.Series.Count > 0) ? PlotSeries(runDir, name, r, c, tools)
                : c.Comparison.Figures.Count > 0 ? PlotFigures(runDir, name, r, c, tools) : null;
            if (png is not null) md.AppendLine($"![{c.Key}: {r.Base} and {r.New}]({png})").AppendLine();
        }
        return md.ToString();
    }

    /// <summary>Both subjects' sweeps on one pair of axes (log-log, or semi-log for exponential growth), each round's points.</summary>
    private static string? PlotSeries(string runDir, string name, CompareResult r, ComparedCell c, IToolRunner tools)
    {
        var dat = new StringBuilder();
        var plots = new List<string>();
        var slope = c.Comparison.Figures.FirstOrDefault();
        var index = 0;
        foreach (var (side, subject, cells, color, figure) in new[] { ("base", r.Base, c.Base, 1, slope?.Base), ("new", r.New, c.New, 2, slope?.New) })
            foreach (var cell in cells.Where(x => x.Series.Count > 0))
            {
                dat.AppendLine($"# {side} {subject}");
                foreach (var p in cell.Series) dat.AppendLine(string.Format(Inv, "{0} {1}", p.X, p.Y));
                dat.AppendLine().AppendLine();
                var label = figure is null ? "" : $", {slope!.Name} {figure}";
                plots.Add($"'{name}.dat' index {index++} using 1:2 with linespoints lw 2 pt 7 lc {color} title '{side} {subject}{label}'");
            }
        var first = c.Base.Concat(c.New).First(x => x.Series.Count > 0);
        var script = string.Join("\n",
            "set terminal pngcairo size 900,600 font ',11' noenhanced",
            $"set output '{name}.png'",
            c.Comparison.Plot == PlotScale.SemiLog ? "set logscale y" : "set logscale xy",
            "set grid", "set key top left",
            $"set xlabel '{first.SeriesUnit ?? "n"}'",
            $"set ylabel '{first.SeriesMetric} (s)'",
            $"set title '{c.Key}: {Name(c.Comparison.Verdict)}'",
            $"plot {string.Join(", \\\n     ", plots)}");
        return Gnuplot(runDir, name, dat.ToString(), script, tools);
    }

    /// <summary>Each figure of the cell: both subjects' values with their 95% intervals, side by side on one axis.</summary>
    private static string? PlotFigures(string runDir, string name, CompareResult r, ComparedCell c, IToolRunner tools)
    {
        var dat = new StringBuilder();
        var figures = c.Comparison.Figures.Where(f => f.Base is not null && f.New is not null).ToList();
        if (figures.Count == 0) return null;
        var panels = new List<string>();
        for (var i = 0; i < figures.Count; i++)
        {
            var f = figures[i];
            dat.AppendLine($"# {f.Name}");
            dat.AppendLine(string.Format(Inv, "\"base {0}\" {1} {2} {3}", r.Base, f.Base!.Value, f.Base.Low, f.Base.High));
            dat.AppendLine(string.Format(Inv, "\"new {0}\" {1} {2} {3}", r.New, f.New!.Value, f.New.Low, f.New.High));
            dat.AppendLine().AppendLine();
            panels.Add(string.Join("\n", $"set title '{f.Name}{(f.Differs ? ": differs" : "")}'", "set xrange [-0.5:1.5]", "set yrange [0:*]",
                                   $"plot '{name}.dat' index {i} using 0:2:3:4:xtic(1) with yerrorbars pt 7 ps 1.5 lw 2 notitle"));
        }
        var script = string.Join("\n",
            $"set terminal pngcairo size {Math.Max(720, 400 * figures.Count)},440 font ',11' noenhanced",
            $"set output '{name}.png'", "set grid ytics", "set datafile separator whitespace",
            $"set multiplot layout 1,{figures.Count} title '{c.Key}: {Name(c.Comparison.Verdict)} (intervals)'",
            string.Join("\n", panels), "unset multiplot");
        return Gnuplot(runDir, name, dat.ToString(), script, tools);
    }

    private static string? Gnuplot(string runDir, string name, string data, string script, IToolRunner tools)
    {
        File.WriteAllText(Path.Combine(runDir, name + ".dat"), data);
        File.WriteAllText(Path.Combine(runDir, name + ".gp"), script + "\n");
        if (Subject.Which("gnuplot") is null) return null;
        var run = tools.Run("gnuplot", ["-e", $"cd '{runDir}'", name + ".gp"], TimeSpan.FromMinutes(1));
        return run.ExitCode == 0 && File.Exists(Path.Combine(runDir, name + ".png")) ? name + ".png" : null;
    }
}
