using System.Globalization;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

public static class ConsoleTable
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>
    /// The figures a person reads first, by signature family: the numbers the labs talk about, not the run's status.
    /// Families are told apart by the metrics they leave (Signatures/Evidence.cs and the sweep).
    /// </summary>
    public static string KeyMetrics(CellResult c)
    {
        var m = c.Metrics;
        var parts = new List<string>();
        if (m.ContainsKey("shmem_delta_mb"))
        {
            // On Windows the same metrics are the page-file sections the process holds by handle (ShmemProbe).
            var windows = OperatingSystem.IsWindows();
            if (!windows) parts.Add($"cell shmem {Signed(m["shmem_delta_mb"])} MB");
            if (m.TryGetValue("rss_mb", out var rss)) parts.Add($"{(windows ? "working set" : "RSS")} {Num(rss, "0.0")} MB");
            if (m.TryGetValue("held_objects", out var held))
                parts.Add($"{(windows ? "sections held by handle" : "held by fd")} {Num(held, "0")} ({Num(m.GetValueOrDefault("held_fd_only_mb") ?? 0.0, "0.0")} MB)");
            if (m.TryGetValue("after_exit_delta_mb", out var after)) parts.Add($"after exit {Signed(after)} MB");
        }
        else if (m.TryGetValue("hits", out var hits) && m.TryGetValue("runs", out var runs))
        {
            var rate = m.TryGetValue("rate", out var r) ? $", rate {Percent(r)}" : "";
            var ci = m.TryGetValue("rate_ci95", out var iv) && iv is double[] { Length: 2 } a ? $" [{Percent(a[0])}, {Percent(a[1])}]" : "";
            parts.Add($"hits {Num(hits, "0")}/{Num(runs, "0")}{rate}{ci}");
            if (m.TryGetValue("p_upper95", out var p)) parts.Add($"rate < {Percent(p)} at 95%");
            if (m.TryGetValue("s_per_run", out var s)) parts.Add($"{Num(s, "0.###")} s/run");
        }
        else if (m.TryGetValue("exponent", out var exp))
        {
            var fit = m.TryGetValue("ls_exponent", out var ls) ? $"least squares {Num(ls, "0.00")}, " : "";
            parts.Add($"exponent {Num(exp, "0.00")} ({fit}r² {Num(m.GetValueOrDefault("r2") ?? 0.0, "0.000")})");
            foreach (var kv in m.Where(kv => kv.Key.Contains('@'))) parts.Add($"{kv.Key} {Num(kv.Value, "0.###")}");
            if (m.TryGetValue("stack_hits", out var sh)) parts.Add($"stacks {sh}");
        }
        else
        {
            // The process family: what the run did is the figure.
            if (m.TryGetValue("status", out var st)) parts.Add($"{st}");
            if (m.TryGetValue("wall_s", out var w)) parts.Add($"{Num(w, "0.##")} s");
            if (m.TryGetValue("peak_mb", out var pk)) parts.Add($"peak {Num(pk, "0.#")} MB");
        }
        if (m.TryGetValue("heap_instances", out var heap)) parts.Add($"heap {heap}");
        if (m.TryGetValue("double_free", out var df)) parts.Add($"{df}");
        if (c.CaptureErrors.Count > 0) parts.Add($"{c.CaptureErrors.Count} capture error(s)");
        return string.Join(", ", parts);
    }

    private static string Num(object v, string format) => v switch
    {
        double d => d.ToString(format, Inv),
        int i => i.ToString(Inv),
        long l => l.ToString(Inv),
        _ => v.ToString() ?? "",
    };

    private static string Signed(object v) => v is double d ? d.ToString("+0.0;-0.0", Inv) : Num(v, "0.0");

    private static string Percent(object v) => v is double d ? (d * 100).ToString("0.##", Inv) + "%" : Num(v, "0.##");

    public static string Render(IReadOnlyList<CellResult> cells)
    {
        string[] head = ["repro:case", "variant", "subject", "outcome", "expected", "gate", "key figures"];
        var rows = cells.Select(c => new[]
        {
            $"{c.Key.Repro}:{c.Key.Case}", c.Key.Variant, c.Key.Subject, c.Outcome.Name(),
            c.Expected?.Outcome.Name() ?? "—", c.Gate switch
            {
                GateStatus.Pass => "ok", GateStatus.Unchecked => "-", GateStatus.XPass => "XPASS",
                GateStatus.Regression => "REGRESSION", _ => "MISMATCH",
            },
            KeyMetrics(c),
        }).ToList();
        var widths = head.Select((h, i) => Math.Max(h.Length, rows.Select(r => r[i].Length).DefaultIfEmpty(0).Max())).ToArray();
        string Line(string[] r) => string.Join("  ", r.Select((s, i) => i == r.Length - 1 ? s : s.PadRight(widths[i]))).TrimEnd();
        var lines = new List<string> { Line(head), Line(widths.Select(w => new string('-', w)).ToArray()) };
        lines.AddRange(rows.Select(Line));
        foreach (var c in cells.Where(c => c.Gate is not (GateStatus.Pass or GateStatus.Unchecked)))
        {
            lines.Add("");
            lines.Add($"{c.Key}: {c.GateMessage}");
            lines.Add($"  detail:    {c.Detail}");
            lines.Add($"  artifacts: {c.ArtifactDir}");
            lines.Add($"  re-run:    {c.Rerun}");
        }
        return string.Join(Environment.NewLine, lines);
    }
}
