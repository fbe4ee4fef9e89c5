using Corpus.Harness.Json;
using System.Text.Json;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>`corpus list --json`: every cell a run would run, with its expected outcome and its own run arguments.</summary>
public sealed class ListCommandTests : IDisposable
{
    private readonly TestCorpus _corpus = new();

    public void Dispose() => _corpus.Dispose();

    private (int Exit, string Out, string Err) List(params string[] filters)
    {
        var (o, e) = (new StringWriter(), new StringWriter());
        var args = Args.Parse(["list", .. filters]);
        var exit = CellList.Write(_corpus.Root, new Filter(args.List("repro"), args.List("case"), args.List("variant"),
                                                           args.List("subject"), args.List("exclude-tag")),
                                  args.Has("json"), o, e);
        return (exit, o.ToString(), e.ToString());
    }

    [Fact]
    public void EveryDefaultCellWithItsExpectedOutcomeAndRunArguments()
    {
        _corpus.Write("w");
        var (exit, json, _) = List("--json");
        Assert.Equal(0, exit);
        using var doc = JsonDocument.Parse(json);
        var cells = doc.RootElement.GetProperty("cells").EnumerateArray().ToList();
        Assert.Equal(8, cells.Count);   // 2 cases x 2 variants x 2 subjects
        Assert.All(cells, c => Assert.Equal("unsupported", c.GetProperty("expected").GetString()));
        var big = cells.First(c => c.GetProperty("case").GetString() == "big");
        Assert.Equal(["slow"], big.GetProperty("tags").EnumerateArray().Select(t => t.GetString()));
        Assert.Equal(["run", "--repro", "w", "--case", "big", "--variant", "bug", "--subject", "mono"],
                     big.GetProperty("args").EnumerateArray().Select(a => a.GetString()));
    }

    [Fact]
    public void FiltersAreRunsAndAMissingExpectationIsNull()
    {
        _corpus.Write("w");
        var (_, json, _) = List("--json", "--exclude-tag", "slow", "--subject", "mono:/usr/bin/mono");
        using var doc = JsonDocument.Parse(json);
        var cells = doc.RootElement.GetProperty("cells").EnumerateArray().ToList();
        Assert.Equal(2, cells.Count);
        Assert.All(cells, c => Assert.Equal(JsonValueKind.Null, c.GetProperty("expected").ValueKind));
    }

    [Fact]
    public void AnUnknownNameIsAnInputError()
    {
        _corpus.Write("w");
        var e = Assert.Throws<InputException>(() => List("--repro", "nope"));
        Assert.Contains("no repro 'nope'", e.Message);
    }
}
