using System.Text.Json;
using Corpus.Harness.Report;

namespace Corpus.Harness.Runner;

/// <summary>`corpus run --shard I/N` (its share of the plan) and `corpus durations RUN…` (refreshes the record it is balanced by).</summary>
public static class ShardCommand
{
    public static string DurationsFile(string root) => Path.Combine(root, Durations.DefaultFile);

    /// <summary>The plan itself without --shard; with it, the I-th share and the record merge checks it against.</summary>
    public static (ShardRecord? Shard, IReadOnlyList<PlannedCell> Plan) Pick(string root, string? shard, IReadOnlyList<PlannedCell> plan)
    {
        if (shard is null) return (null, plan);
        var spec = ShardSpec.Parse(shard);
        var durations = Durations.Load(DurationsFile(root));
        var share = Shards.Pick(plan, c => durations.For(Key(c)), spec);
        Console.Error.WriteLine($"shard {spec}: {share.Count} of {plan.Count} cells, "
                                + $"{share.Sum(c => durations.For(Key(c))):0} s of {plan.Sum(c => durations.For(Key(c))):0} s recorded ({Durations.DefaultFile})");
        return (new ShardRecord(spec.Index, spec.Count, plan.Select(c => Durations.Key(Key(c))).ToList()), share);
    }

    private static Model.CellKey Key(PlannedCell c) => new(c.Entry.Manifest.Id, c.Case.Id, c.Variant, c.Subject.Name);

    /// <summary>`corpus durations RUN… [--file F]`: every cell of the runs gets its measured seconds in the record.</summary>
    internal static int Record(string root, Args args, TextWriter stdout)
    {
        var runs = args.List("runs");
        if (runs.Count == 0) throw new UsageException("durations needs RUN…: a run id under artifacts/, or a run folder", "durations");
        var file = args.Get("file") is { } f ? Path.GetFullPath(f) : DurationsFile(root);
        var records = runs.Select(r => RunRecord.Load(root, r)).ToList();
        var (doc, updated) = Durations.Refresh(file, records.SelectMany(r => r.Cells.Select(c => (r.RunId, c))));
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        File.WriteAllText(file, doc.ToJsonString(new JsonSerializerOptions { WriteIndented = true }) + "\n");
        var all = doc["cells"]!.AsObject();
        stdout.WriteLine($"{Path.GetRelativePath(root, file)}: {updated} cells from {string.Join(", ", records.Select(r => r.RunId))}; "
                         + $"{all.Count} cells recorded, {all.Sum(kv => kv.Value!.GetValue<double>()):0} s in all");
        // What bounded each run: its lanes, the critical path, its phases and longest cells.
        foreach (var r in records)
        {
            stdout.WriteLine($"{r.RunId}: {r.Seconds:0} s");
            var cells = r.Cells.Select(c => r.Cell(c, root, $"artifacts/{r.RunId}/")).ToList();
            foreach (var line in Timeline.Describe(cells, r.Seconds)) stdout.WriteLine($"  {line}");
        }
        return RunExit.Ok;
    }
}
