namespace Corpus.Harness.Tests;

/// <summary>
/// The docs cannot drift from the code: every page names only types, members, files, links and make targets that
/// exist (<see cref="DocsCheck"/>), the front pages stay short, and the README's table of repros is the manifests'.
/// </summary>
public sealed class DocsCheckTests
{
    private static readonly string Root = RoslynTriggerTests.Root;

    private static DocsCheck Checker() => new(Root, [typeof(Runner.CellRunner).Assembly, typeof(DocsCheckTests).Assembly]);

    [Fact]
    public void EveryPageNamesOnlyWhatExists()
    {
        var check = Checker();
        var stale = DocsCheck.Pages(Root).SelectMany(check.Check).ToList();
        Assert.True(stale.Count == 0, $"{stale.Count} stale name(s) in the docs:\n{string.Join('\n', stale)}");
    }

    [Fact]
    public void APlantedStaleNameOfEachKindFails()
    {
        var page = Path.Combine(Root, "docs", "planted.md");
        string[] lines =
        [
            "# Planted",
            "The subject's `Subject.BuiltIn` list, `CellRecordWriter`, `harness/Corpus.Harness/Runner/Nowhere.cs`,",
            "`make no-such-target`, [a link](architecture.md#no-such-heading) and [another](no-such-page.md).",
            "Fine: `Subject.Capabilities`, `RunLauncher`, `IRunLauncher.TraceAsync`, `harness/wine/run.sh`, `make test`,",
            "`docs/labs/<id>.md`, `artifacts/latest`, [words](architecture.md#words), [here](#planted), `InterlockedExchange`.",
        ];
        var found = Checker().Check(page, lines);
        Assert.Collection(found,
            f => Assert.Equal("docs/planted.md:2: `Subject.BuiltIn`: Subject has no member BuiltIn", f),
            f => Assert.StartsWith("docs/planted.md:2: `CellRecordWriter`: no type or member of that name", f),
            f => Assert.Equal("docs/planted.md:2: `harness/Corpus.Harness/Runner/Nowhere.cs`: no such file or folder", f),
            f => Assert.Equal("docs/planted.md:3: link (architecture.md#no-such-heading): architecture.md has no heading #no-such-heading", f),
            f => Assert.Equal("docs/planted.md:3: link (no-such-page.md): no file no-such-page.md", f),
            f => Assert.Equal("docs/planted.md:3: `make no-such-target`: no such target in the Makefile", f));
    }

    [Fact]
    public void AnchorsAreGitHubs()
    {
        var anchors = DocsCheck.Anchors(["# Shards: `corpus run --shard I/N` and `corpus merge` (runs one machine cannot hold)",
                                         "## facts.json, schema 1", "## Words", "## Words", "```", "# not a heading", "```"]);
        Assert.Equal(["shards-corpus-run---shard-in-and-corpus-merge-runs-one-machine-cannot-hold", "factsjson-schema-1", "words", "words-1"],
                     anchors.ToArray());
    }

    [Theory]
    [InlineData("docs/architecture.md", 600)]
    [InlineData("README.md", 200)]
    public void TheFrontPagesStayShort(string page, int lines) =>
        Assert.InRange(File.ReadAllLines(Path.Combine(Root, page)).Length, 1, lines);

    /// <summary>The README's table of repros is checked against the manifests: one row per repro, its title and subjects.</summary>
    [Fact]
    public void TheReadmesReprosAreTheManifests()
    {
        var catalog = Runner.Catalog.Load(Root);
        Assert.Empty(catalog.InputErrors);
        var expected = catalog.Entries.Select(e => e.Manifest).OrderBy(m => m.Id, StringComparer.Ordinal)
            .Select(m => $"| [{m.Id}](docs/labs/{m.Id}.md) | {m.Title} | {m.Category} | "
                         + string.Join(", ", m.Subjects.Concat(m.Cases.SelectMany(c => c.Subjects)).Distinct()) + " |").ToList();
        var readme = File.ReadAllLines(Path.Combine(Root, "README.md"));
        var rows = readme.Where(l => l.StartsWith("| [", StringComparison.Ordinal)).ToList();
        Assert.True(expected.SequenceEqual(rows),
                    "README.md's table of repros differs from the manifests; it should read:\n" + string.Join('\n', expected));
    }
}
