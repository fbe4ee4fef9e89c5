using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>
/// `corpus merge RUN… [--out DIR]`: the runs of `run --shard 1/N` … `N/N` of one selection become one run, written as
/// one run of that selection would have written it: the cells in plan order, their folders and records, summary.json,
/// junit.xml, report.md with its plots, the table and the exit code. Runs of different checkouts (commit, expected/,
/// manifests) or selections, a shard given twice or missing, and a cell in two runs are input errors.
/// </summary>
public static class MergeCommand
{
    internal static int Run(string root, Args args, TextWriter stdout, IToolRunner tools)
    {
        var names = args.List("runs");
        if (names.Count == 0) throw new UsageException("merge needs RUN…: the runs of every shard (run ids under artifacts/, or run folders)", "merge");
        var runs = names.Select(n => RunRecord.Load(root, n)).ToList();
        var (selection, errors) = Check(runs);
        // Listed by shard, whatever order they were given in.
        runs = [.. runs.OrderBy(r => r.Block("shard")!.Value.GetProperty("index").GetInt32())];
        string runId, runDir;
        if (args.Get("out") is { } out_)
        {
            runDir = Path.GetFullPath(out_);
            runId = Path.GetFileName(runDir.TrimEnd(Path.DirectorySeparatorChar));
            Directory.CreateDirectory(Path.GetDirectoryName(runDir)!);
            if (!Containment.IHost.Current.MakeDir(runDir)) throw new InputException($"--out {out_}: {runDir} already exists; choose another folder");
        }
        else (runId, runDir) = Program.ClaimRunDir(Path.Combine(root, "artifacts"), null);

        List<CellResult> cells;
        try { cells = Join(root, runs, selection, runDir); }
        catch
        {
            // A refused merge leaves no half-written run behind.
            Directory.Delete(runDir, recursive: true);
            throw;
        }
        var seconds = runs.Sum(r => r.Seconds);
        var merged = runs.Select(r => (object)new Dictionary<string, object?>
        {
            ["runId"] = r.RunId, ["host"] = r.Host, ["seconds"] = r.Seconds, ["shard"] = $"{r.Block("shard")!.Value.GetProperty("index")}/{selection.Shards}",
        }).ToList();
        var checkout = runs[0].Block("checkout")!.Value;
        var provenance = new Provenance(new Checkout(checkout.GetProperty("commit").GetString(), checkout.GetProperty("expected").GetString()!,
                                                     checkout.GetProperty("manifests").GetString()!), Merged: merged);
        SummaryWriter.Write(Path.Combine(runDir, "summary.json"), runId, cells, errors, seconds, root, provenance,
                            host: string.Join(", ", runs.Select(r => r.Host).Distinct()));
        SummaryWriter.WriteJUnit(Path.Combine(runDir, "junit.xml"), cells, errors);
        new MarkdownReport(tools).Write(runDir, runId, cells, errors, seconds);
        var artifacts = Path.Combine(root, "artifacts");
        if (Path.GetDirectoryName(runDir) == artifacts) RunOutputs.LinkLatest(artifacts, runId);
        stdout.WriteLine($"merged {runs.Count} runs ({string.Join(", ", runs.Select(r => r.RunId))}): {cells.Count} cells into "
                         + Path.GetRelativePath(root, runDir));
        RunOutputs.Print(stdout, root, runDir, cells, errors, seconds);
        return RunExit.Code(cells, errors.Count);
    }

    /// <summary>Every run a shard of the same selection of the same checkout, each shard once: the whole selection and the input errors.</summary>
    internal static (ShardSelection Selection, IReadOnlyList<string> InputErrors) Check(IReadOnlyList<RunRecord> runs)
    {
        var first = runs[0];
        var seenDirs = new HashSet<string>();
        foreach (var r in runs)
            if (!seenDirs.Add(r.Dir)) throw new InputException($"run {r.RunId} is given twice");
        foreach (var r in runs)
            if (r.Block("shard") is null)
                throw new InputException($"{r.File}: field 'shard': null: run {r.RunId} was not run with --shard I/N; merge joins the shards of one selection");
        foreach (var r in runs.Skip(1))
            foreach (var field in new[] { "commit", "expected", "manifests" })
                if (r.CheckoutField(field) != first.CheckoutField(field))
                    throw new InputException($"{r.File}: field 'checkout.{field}': runs {first.RunId} and {r.RunId} come from different checkouts "
                                             + $"({first.CheckoutField(field) ?? "none"} and {r.CheckoutField(field) ?? "none"}); shards must be run from one checkout and judged against one expected/");
        static IReadOnlyList<string> Selection(RunRecord x) =>
            x.Block("shard")!.Value.GetProperty("selection").EnumerateArray().Select(e => e.GetString()!).ToList();
        static int Count(RunRecord x) => x.Block("shard")!.Value.GetProperty("count").GetInt32();
        static int Index(RunRecord x) => x.Block("shard")!.Value.GetProperty("index").GetInt32();
        var selection = Selection(first);
        foreach (var r in runs.Skip(1))
        {
            if (Count(r) != Count(first))
                throw new InputException($"{r.File}: field 'shard.count': run {r.RunId} is a shard of {Count(r)}, run {first.RunId} of {Count(first)}");
            if (!Selection(r).SequenceEqual(selection))
                throw new InputException($"{r.File}: field 'shard.selection': runs {first.RunId} and {r.RunId} selected different cells "
                                         + "(other --repro, --case, --variant, --subject or --exclude-tag)");
        }
        foreach (var g in runs.GroupBy(Index).Where(g => g.Count() > 1))
            throw new InputException($"shard {g.Key}/{Count(first)} is given twice: runs {string.Join(" and ", g.Select(r => r.RunId))}");
        var missing = Enumerable.Range(1, Count(first)).Except(runs.Select(Index)).ToList();
        if (missing.Count > 0)
            throw new InputException($"shard {string.Join(", ", missing.Select(i => $"{i}/{Count(first)}"))} missing: merge needs every shard of the selection "
                                     + $"(given: {string.Join(", ", runs.Select(r => $"{r.RunId} = {Index(r)}/{Count(first)}"))})");
        var owner = new Dictionary<string, string>();
        foreach (var r in runs)
            foreach (var c in r.Cells)
            {
                string key;
                try { key = CellKeyOf(c); }
                catch (InvalidOperationException e) { throw new InputException(r.File, "cells", $"{e.Message}: not a cell a run wrote"); }
                if (!selection.Contains(key))
                    throw new InputException($"{r.File}: field 'cells': {key} of run {r.RunId} is not in its shard's selection");
                if (!owner.TryAdd(key, r.RunId))
                    throw new InputException($"cell {key} is in two runs: {owner[key]} and {r.RunId}; shards must not overlap");
            }
        var absent = selection.Where(k => !owner.ContainsKey(k)).ToList();
        if (absent.Count > 0)
            throw new InputException($"{absent.Count} cell(s) of the selection are in no run (an interrupted shard?): {string.Join("; ", absent.Take(5))}"
                                     + (absent.Count > 5 ? "; …" : ""));
        var inputErrors = runs.SelectMany(r => r.InputErrors).Distinct().ToList();
        return (new ShardSelection(selection, Count(first)), inputErrors);
    }

    /// <summary>Every cell of the selection in plan order, and N.</summary>
    public sealed record ShardSelection(IReadOnlyList<string> Cells, int Shards);

    private static string CellKeyOf(JsonElement c)
    {
        string Field(string name) => c.ValueKind == JsonValueKind.Object && c.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String
            ? v.GetString()! : throw new InvalidOperationException($"a cell without '{name}'");
        return Durations.Key(new Model.CellKey(Field("repro"), Field("case"), Field("variant"), Field("subject")));
    }

    /// <summary>
    /// The cells in plan order, each with its folder copied into the merged run. facts.json is copied with its run's
    /// paths moved (its file list was taken when the cell ended, so it cannot be listed again).
    /// </summary>
    private static List<CellResult> Join(string root, IReadOnlyList<RunRecord> runs, ShardSelection selection, string runDir)
    {
        var relOut = Path.GetRelativePath(root, runDir).Replace('\\', '/') + "/";
        var order = selection.Cells.Select((k, i) => (k, i)).ToDictionary(x => x.k, x => x.i);
        var cells = new List<(int Order, CellResult Cell)>();
        foreach (var r in runs)
            foreach (var c in r.Cells)
            {
                CellResult cell;
                try { cell = r.Cell(c, root, relOut); }
                catch (Exception e) when (e is KeyNotFoundException or InvalidOperationException or FormatException or JsonException or ArgumentException)
                {
                    throw new InputException(r.File, "cells", $"{CellKeyOf(c)}: its records are not what a run writes ({e.GetType().Name}: {e.Message})");
                }
                Copy(Path.GetDirectoryName(r.Local(c.GetProperty("facts").GetString()))!, cell.RecordDir!);
                var facts = Path.Combine(cell.RecordDir!, FactsWriter.FileName);
                File.WriteAllText(facts, File.ReadAllText(facts).Replace($"artifacts/{r.RunId}/", relOut));
                cells.Add((order[CellKeyOf(c)], cell));
            }
        return cells.OrderBy(x => x.Order).Select(x => x.Cell).ToList();
    }

    private static void Copy(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var f in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories))
        {
            var target = Path.Combine(to, Path.GetRelativePath(from, f));
            Directory.CreateDirectory(Path.GetDirectoryName(target)!);
            File.Copy(f, target);
        }
    }
}
