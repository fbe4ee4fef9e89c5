using System.Text.Json;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Xunit.Abstractions;

namespace Corpus.Harness.Tests;

/// <summary>`corpus run --shard I/N` over the real gate selection and the recorded durations (ci/durations.json).</summary>
// Swaps the process's console (Console.SetOut/SetError), so it runs alone: in parallel another test's swap took its stderr.
[Collection(nameof(ConsoleCollection))]
public class ShardTests(ITestOutputHelper output)
{
    private static readonly string Root = RoslynTriggerTests.Root;

    /// <summary>The gate's cells, in plan order, as `corpus list --json` gives them (the selection `run` shards).</summary>
    internal static IReadOnlyList<CellKey> GatePlan()
    {
        var stdout = new StringWriter();
        Assert.Equal(0, CellList.Write(Root, new Filter([], [], [], [], []), json: true, stdout, new StringWriter()));
        return JsonDocument.Parse(stdout.ToString()).RootElement.GetProperty("cells").EnumerateArray()
                           .Select(c => new CellKey(c.GetProperty("repro").GetString()!, c.GetProperty("case").GetString()!,
                                                    c.GetProperty("variant").GetString()!, c.GetProperty("subject").GetString()!))
                           .ToList();
    }

    private static readonly Durations Recorded = Durations.Load(Path.Combine(Root, Durations.DefaultFile));

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(7)]
    [InlineData(16)]
    [InlineData(500)]   // more shards than cells: some shares are empty
    public void TheShardsTogetherAreTheWholeSelectionWithNoOverlap(int n)
    {
        var plan = GatePlan();
        var shares = Shards.Split(plan, Recorded.For, n);
        Assert.Equal(n, shares.Count);
        var all = shares.SelectMany(s => s).ToList();
        Assert.Equal(plan.Count, all.Count);
        Assert.Equal(plan.Count, all.Distinct().Count());
        Assert.Equal(plan.ToHashSet(), all.ToHashSet());
        // Each share runs in plan order, as an unsharded run would.
        var index = plan.Select((k, i) => (k, i)).ToDictionary(x => x.k, x => x.i);
        foreach (var share in shares) Assert.True(share.Select(k => index[k]).SequenceEqual(share.Select(k => index[k]).Order()));
    }

    /// <summary>
    /// Bound: the longest share within 2 % of the ideal (the recorded total / N, or the longest cell when that is more).
    /// Measured on the record of gate-20261125-062335-29443 (94 cells, 1061 s): within 0.2 % for N = 2…8. Cells in plan
    /// order cut into N runs of equal count, the naive split, are off by 10–50 % on the same record.
    /// </summary>
    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(6)]
    [InlineData(8)]
    public void ShardsAreBalancedByTheRecordedDurations(int n)
    {
        var plan = GatePlan();
        var own = plan.Count(k => Recorded.Cells.ContainsKey(Durations.Key(k)));
        Assert.True(own >= plan.Count * 0.8,
                    $"only {own} of the gate's {plan.Count} cells have a recorded duration; refresh it: make durations RUN=<a gate run>");
        var loads = Shards.Split(plan, Recorded.For, n).Select(s => s.Sum(Recorded.For)).ToList();
        var ideal = Math.Max(loads.Sum() / n, plan.Max(Recorded.For));
        output.WriteLine($"N={n}: shares {string.Join(", ", loads.Select(l => $"{l:0.0}"))} s; ideal {ideal:0.0} s; "
                         + $"longest {loads.Max() / ideal:P1} of it");
        Assert.True(loads.Max() <= ideal * 1.02, $"longest share {loads.Max():0.0} s, ideal {ideal:0.0} s");
        var naive = plan.Chunk((plan.Count + n - 1) / n).Select(c => c.Sum(Recorded.For)).Max();
        output.WriteLine($"  plan order cut in {n}: longest {naive:0.0} s");
    }

    [Fact]
    public void TheLongestShareIsWithinTheLongestCellOfTheIdealForAnyDurations()
    {
        var random = new Random(26);
        for (var round = 0; round < 200; round++)
        {
            var cells = Enumerable.Range(0, random.Next(1, 120)).Select(i => (i, s: Math.Round(random.NextDouble() * random.Next(1, 300), 1))).ToList();
            var n = random.Next(1, 12);
            var loads = Shards.Split(cells, c => c.s, n).Select(s => s.Sum(c => c.s)).ToList();
            Assert.True(loads.Max() <= cells.Sum(c => c.s) / n + cells.Max(c => c.s) + 1e-9, $"round {round}");
        }
    }

    [Fact]
    public void TheSameSelectionAndDurationsGiveTheSameShards()
    {
        var plan = GatePlan();
        // The record written with its cells in the opposite order: the shares must not depend on it.
        using var dir = new TempDir();
        var reversed = Path.Combine(dir.Path, "durations.json");
        File.WriteAllText(reversed, JsonSerializer.Serialize(new
        {
            schema = 1, cells = Recorded.Cells.Reverse().ToDictionary(kv => kv.Key, kv => kv.Value),
        }));
        var other = Durations.Load(reversed);
        for (var n = 2; n <= 5; n++)
            Assert.Equal(Shards.Split(plan, Recorded.For, n).Select(s => string.Join(";", s)),
                         Shards.Split(plan, other.For, n).Select(s => string.Join(";", s)));
        // Cells of equal time go round in plan order.
        var equal = Shards.Split(["a", "b", "c", "d", "e", "f"], _ => 1.0, 3);
        Assert.Equal([["a", "d"], ["b", "e"], ["c", "f"]], equal.Select(s => s.ToArray()).ToArray());
    }

    [Fact]
    public void ACellWithNoRecordTakesItsCaseOnOtherSubjectsThenTheDefault()
    {
        using var dir = new TempDir();
        var file = Path.Combine(dir.Path, "durations.json");
        File.WriteAllText(file, """{ "schema": 1, "cells": { "r:c bug net8": 10, "r:c bug net10": 20, "r:c fix net8": 99, "r:other bug net8": 7 } }""");
        var d = Durations.Load(file);
        Assert.Equal(10, d.For(new CellKey("r", "c", "bug", "net8")));
        Assert.Equal(15, d.For(new CellKey("r", "c", "bug", "net:9.0.23")));
        Assert.Equal(Durations.DefaultSeconds, d.For(new CellKey("r", "new", "bug", "net8")));
        Assert.Equal(Durations.DefaultSeconds, Durations.Empty.For(new CellKey("r", "c", "bug", "net8")));
    }

    [Theory]
    [InlineData("""{ "schema": 2, "cells": {} }""", "field 'schema'")]
    [InlineData("""{ "schema": 1, "cells": { "r:c bug net8": -1 } }""", "field 'cells.r:c bug net8'")]
    [InlineData("""{ "schema": 1, "cells": { "r:c bug net8": "fast" } }""", "field 'cells.r:c bug net8'")]
    [InlineData("""{ "schema": 1, "cells": [] }""", "field 'cells'")]
    [InlineData("""{ "schema": 1, "cels": {} }""", "field 'cels'")]
    public void ABrokenDurationsRecordNamesTheField(string json, string field)
    {
        using var dir = new TempDir();
        var file = Path.Combine(dir.Path, "durations.json");
        File.WriteAllText(file, json);
        var e = Assert.Throws<InputException>(() => Durations.Load(file));
        Assert.Contains(file, e.Message);
        Assert.Contains(field, e.Message);
    }

    [Theory]
    [InlineData("0/2")]
    [InlineData("3/2")]
    [InlineData("1/0")]
    [InlineData("x")]
    [InlineData("2")]
    [InlineData("1/2/3")]
    [InlineData("1.5/2")]
    public async Task ABadShardIsAnInputErrorNamingTheOption(string shard)
    {
        Assert.Contains("--shard", Assert.Throws<ArgumentException>(() => ShardSpec.Parse(shard)).Message);
        using var corpus = new TestCorpus();
        corpus.Write("one");
        var stderr = new StringWriter();
        var was = Console.Error;
        Console.SetError(stderr);
        try { Assert.Equal(RunExit.InputError, await Program.Main(["run", "--root", corpus.Root, "--shard", shard])); }
        finally { Console.SetError(was); }
        Assert.Contains("--shard", stderr.ToString());
        Assert.False(Directory.Exists(Path.Combine(corpus.Root, "artifacts")) && Directory.EnumerateDirectories(Path.Combine(corpus.Root, "artifacts")).Any(),
                     "a bad --shard must stop the run before it starts");
    }

    [Theory]
    [InlineData("-1/2")]
    [InlineData("+1/2")]
    [InlineData("1/ 2")]
    [InlineData("")]
    public void OnlyDigitsMakeAShard(string shard) =>
        Assert.Contains("--shard", Assert.Throws<ArgumentException>(() => ShardSpec.Parse(shard)).Message);

    [Fact]
    public void ShardsParse() => Assert.Equal(new ShardSpec(3, 4), ShardSpec.Parse("3/4"));
}

internal sealed class TempDir : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory("corpus-shard-").FullName;
    public void Dispose() => Directory.Delete(Path, recursive: true);
}
