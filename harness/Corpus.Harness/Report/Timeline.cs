using System.Globalization;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>
/// Where a run's time went: each lane's cells, when the lane began and ended, which lane bounded the run (the critical
/// path: the timed lane starts only once the busy and the alongside lanes are done), the seconds of every phase
/// summed over the cells, and the longest cells with their phases. Read from the cells' own records.
/// </summary>
public static class Timeline
{
    public static IReadOnlyList<string> Describe(IReadOnlyList<CellResult> cells, double wall)
    {
        static string S(double d) => d.ToString("0", CultureInfo.InvariantCulture);
        var timed = cells.Where(c => c.StartedAt is not null && c.Lane is not null).ToList();
        if (timed.Count == 0) return ["no cell of this run recorded its lane (a run from before lanes were recorded)"];
        var lines = new List<string>();
        var ends = new Dictionary<string, double>();
        foreach (var lane in timed.GroupBy(c => c.Lane!).OrderBy(g => g.Min(c => c.StartedAt!.Value)))
        {
            var (start, end) = (lane.Min(c => c.StartedAt!.Value), lane.Max(c => c.StartedAt!.Value + c.Seconds));
            ends[lane.Key] = end;
            lines.Add($"{lane.Key}: {lane.Count()} cells, {S(lane.Sum(c => c.Seconds))} s of cells, from {S(start)} s to {S(end)} s");
        }
        if (ends.TryGetValue("timed", out var timedEnd))
        {
            var before = ends.Where(kv => kv.Key != "timed").OrderByDescending(kv => kv.Value).FirstOrDefault();
            var timedSeconds = timed.Where(c => c.Lane == "timed").Sum(c => c.Seconds);
            lines.Add(before.Key is null ? $"critical path: the timed lane alone, {S(timedSeconds)} s"
                : $"critical path: the {before.Key} lane ({S(before.Value)} s), then the timed lane ({S(timedSeconds)} s); the run took {S(wall)} s");
        }
        else if (ends.Count > 0)
        {
            var last = ends.MaxBy(kv => kv.Value);
            lines.Add($"critical path: the {last.Key} lane, ending at {S(last.Value)} s of {S(wall)} s");
        }
        var phases = timed.SelectMany(c => c.Phases).GroupBy(kv => kv.Key).Select(g => $"{g.Key} {S(g.Sum(kv => kv.Value))} s");
        lines.Add($"phases over all cells: {string.Join(", ", phases)}");
        foreach (var c in timed.OrderByDescending(c => c.Seconds).Take(8))
            lines.Add($"  {c.Key.Repro}:{c.Key.Case}/{c.Key.Variant}/{c.Key.Subject} ({c.Lane}) {c.Seconds.ToString("0.0", CultureInfo.InvariantCulture)} s: "
                      + string.Join(", ", c.Phases.Where(kv => kv.Value >= 0.05).Select(kv => $"{kv.Key} {kv.Value.ToString("0.0", CultureInfo.InvariantCulture)}")));
        return lines;
    }
}
