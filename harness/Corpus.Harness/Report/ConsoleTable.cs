using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

public static class ConsoleTable
{
    /// <summary>The figures a person reads first, as the cell's family and evidence checks gave them.</summary>
    public static string KeyMetrics(CellResult c) => string.Join(", ", c.KeyFigures);

    public static string Render(IReadOnlyList<CellResult> cells)
    {
        string[] head = ["repro:case", "variant", "subject", "outcome", "expected", "gate", "key figures"];
        var rows = cells.Select(c => new[]
        {
            $"{c.Key.Repro}:{c.Key.Case}", c.Key.Variant, c.Key.Subject, c.Outcome.Name(),
            c.Expected?.Outcome.Name() ?? "—", c.Gate switch
            {
                GateStatus.Pass => "ok", GateStatus.Unchecked => "-", GateStatus.XPass => "XPASS",
                GateStatus.Regression => "REGRESSION", GateStatus.Inconclusive => "INCONCLUSIVE", _ => "MISMATCH",
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
