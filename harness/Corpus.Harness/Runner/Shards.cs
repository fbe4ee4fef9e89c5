using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner;

/// <summary>`--shard I/N`: the I-th of N shares of a selection (1-based).</summary>
public sealed record ShardSpec(int Index, int Count)
{
    public static ShardSpec Parse(string text)
    {
        var parts = text.Split('/');
        if (parts.Length != 2
            || !int.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var i)
            || !int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var n))
            throw new ArgumentException($"--shard needs I/N (e.g. 1/4), not '{text}'");
        if (n < 1 || i < 1 || i > n)
            throw new ArgumentException($"--shard {text}: I must be between 1 and N, and N at least 1");
        return new(i, n);
    }

    public override string ToString() => $"{Index}/{Count}";
}

/// <summary>
/// The recorded durations of cells (ci/durations.json), which shards are balanced by. Refreshed from runs' summaries
/// by `corpus durations RUN…`; committed, so every machine of a CI matrix splits a selection the same way.
/// </summary>
public sealed class Durations
{
    public const string DefaultFile = "ci/durations.json";
    /// <summary>A cell with no record of its own or of its case on another subject.</summary>
    public const double DefaultSeconds = 30;

    public IReadOnlyDictionary<string, double> Cells { get; }
    public string? Source { get; }

    private Durations(IReadOnlyDictionary<string, double> cells, string? source) => (Cells, Source) = (cells, source);

    public static Durations Empty { get; } = new(new Dictionary<string, double>(), null);

    public static string Key(CellKey k) => $"{k.Repro}:{k.Case} {k.Variant} {k.Subject}";

    public static Durations Load(string file)
    {
        if (!File.Exists(file)) return Empty;
        var f = Json.Fields.Load(file);
        f.AllowOnly("schema", "source", "cells");
        if (f.IntOr("schema", null, required: true) != 1) throw f.Error("must be 1", "schema");
        var source = f.StringOr("source", null);
        var cells = new Dictionary<string, double>(StringComparer.Ordinal);
        using var doc = JsonDocument.Parse(File.ReadAllText(file), new JsonDocumentOptions
        {
            CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true,
        });
        if (!doc.RootElement.TryGetProperty("cells", out var obj) || obj.ValueKind != JsonValueKind.Object)
            throw f.Error("must be an object of \"repro:case variant subject\": seconds", "cells");
        foreach (var p in obj.EnumerateObject())
        {
            if (p.Value.ValueKind != JsonValueKind.Number || p.Value.GetDouble() < 0)
                throw f.Error($"must be seconds, 0 or more, found {p.Value.GetRawText()}", $"cells.{p.Name}");
            cells[p.Name] = p.Value.GetDouble();
        }
        return new(cells, source);
    }

    /// <summary>
    /// A cell's expected seconds: its own record; else the mean of its case and variant on the subjects that have one
    /// (a new runtime version runs about as long as the recorded ones); else <see cref="DefaultSeconds"/>.
    /// </summary>
    public double For(CellKey k)
    {
        if (Cells.TryGetValue(Key(k), out var s)) return s;
        var prefix = $"{k.Repro}:{k.Case} {k.Variant} ";
        var same = Cells.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal) && kv.Key.IndexOf(' ', prefix.Length) < 0)
                        .Select(kv => kv.Value).ToList();
        return same.Count > 0 ? Math.Round(same.Average(), 1) : DefaultSeconds;
    }

    /// <summary>The record with every cell of these summaries' set to its measured seconds; other cells keep theirs.</summary>
    public static (JsonObject Doc, int Updated) Refresh(string file, IEnumerable<(string RunId, JsonElement Cell)> cells)
    {
        var old = Load(file);
        var merged = new SortedDictionary<string, double>(old.Cells.ToDictionary(), StringComparer.Ordinal);
        var updated = 0;
        var runs = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var (runId, c) in cells)
        {
            // A cell stopped by a signal did not run its course.
            if (c.GetProperty("detail").GetString() == "interrupted") continue;
            var key = Key(new CellKey(c.GetProperty("repro").GetString()!, c.GetProperty("case").GetString()!,
                                      c.GetProperty("variant").GetString()!, c.GetProperty("subject").GetString()!));
            merged[key] = Math.Round(c.GetProperty("seconds").GetDouble(), 1);
            updated++;
            runs.Add(runId);
        }
        var doc = new JsonObject
        {
            ["schema"] = 1,
            ["source"] = updated > 0 ? $"corpus durations {string.Join(' ', runs)}" : old.Source,
            ["cells"] = new JsonObject(merged.Select(kv => KeyValuePair.Create(kv.Key, (JsonNode?)JsonValue.Create(kv.Value)))),
        };
        return (doc, updated);
    }
}

/// <summary>
/// Splits a selection into N shares of about equal recorded time: longest cell first, each to the share with the least
/// time so far (ties: the lower share), cells of equal time in plan order. Only the plan and the durations decide,
/// so every machine computes the same shares. Each share keeps plan order.
/// </summary>
public static class Shards
{
    public static IReadOnlyList<IReadOnlyList<T>> Split<T>(IReadOnlyList<T> plan, Func<T, double> seconds, int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        var load = new double[count];
        var owner = new int[plan.Count];
        var longestFirst = Enumerable.Range(0, plan.Count).Select(i => (i, s: seconds(plan[i])))
                                     .OrderByDescending(x => x.s).ThenBy(x => x.i);
        foreach (var (i, s) in longestFirst)
        {
            var least = 0;
            for (var k = 1; k < count; k++) if (load[k] < load[least]) least = k;
            owner[i] = least;
            load[least] += s;
        }
        return Enumerable.Range(0, count)
                         .Select(k => (IReadOnlyList<T>)Enumerable.Range(0, plan.Count).Where(i => owner[i] == k).Select(i => plan[i]).ToList())
                         .ToList();
    }

    public static IReadOnlyList<T> Pick<T>(IReadOnlyList<T> plan, Func<T, double> seconds, ShardSpec shard) =>
        Split(plan, seconds, shard.Count)[shard.Index - 1];
}
