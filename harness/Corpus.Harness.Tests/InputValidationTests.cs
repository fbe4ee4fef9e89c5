using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Tests;

/// <summary>Bad manifests and expected files must name the file and the field, and not stop the other repros.</summary>
public sealed class InputValidationTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-input-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private const string GoodManifest = """
        {
          "id": "ID", "title": "t", "kind": "perf", "references": ["r"], "languages": ["csharp"],
          "subjects": ["mono", "net10"], "variants": ["bug"],
          "build": { "mono": { "sources": ["src/*.cs"] } },
          "cases": [ { "id": "main", "args": ["x"], "signature": { "process": { "exit": "nonzero", "output": ["boom"] } } } ]
        }
        """;

    private static string GoodExpected(string id) => $$"""
        { "repro": "{{id}}", "cells": [
          { "case": "main", "variant": "bug", "subject": "mono", "outcome": "reproduced", "reason": "r" },
          { "case": "main", "variant": "bug", "subject": "net10", "outcome": "clean", "reason": "r" } ] }
        """;

    private string Write(string id, string manifest, string? expected = null)
    {
        var dir = Path.Combine(_root, "repros", id);
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "repro.json"), manifest.Replace("\"ID\"", $"\"{id}\""));
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.WriteAllText(Path.Combine(_root, "expected", id + ".json"), expected ?? GoodExpected(id));
        return Path.Combine(dir, "repro.json");
    }

    private InputException ManifestError(string manifest)
    {
        var file = Write("bad", manifest);
        var e = Assert.Throws<InputException>(() => Manifest.Load(file));
        Assert.Equal(file, e.File);
        return e;
    }

    [Fact]
    public void GoodManifestLoads()
    {
        var m = Manifest.Load(Write("good", GoodManifest));
        Assert.Equal("good", m.Id);
        Assert.Equal(["linux", "windows"], m.Platforms);
        Assert.Equal(Manifest.DefaultBudget, m.Cases[0].Budget);
        Assert.Equal("nonzero", m.Cases[0].Signature.Process!.Exit);
    }

    [Fact]
    public void MissingFieldIsNamed() =>
        Assert.Equal("title", ManifestError(GoodManifest.Replace("\"title\": \"t\",", "")).Field);

    [Fact]
    public void WrongTypeInNestedFieldIsNamedWithItsPath()
    {
        var e = ManifestError(GoodManifest.Replace("\"args\": [\"x\"]", "\"args\": \"x\""));
        Assert.Equal("cases[0].args", e.Field);
        Assert.Contains("expected an array", e.Problem);
    }

    [Fact]
    public void MisspeltFieldIsRejected() =>
        Assert.Equal("cases[0].signature.proces",
                     ManifestError(GoodManifest.Replace("\"process\"", "\"proces\"")).Field);

    [Fact]
    public void SignatureIsRequired()
    {
        var e = ManifestError(GoodManifest.Replace("\"process\": { \"exit\": \"nonzero\", \"output\": [\"boom\"] }", ""));
        Assert.Equal("cases[0].signature", e.Field);
        Assert.Contains("without a signature", e.Problem);
    }

    [Fact]
    public void BadRegexIsRejected() =>
        Assert.Contains("regular expression", ManifestError(GoodManifest.Replace("\"boom\"", "\"(unclosed\"")).Problem);

    [Fact]
    public void IdMustMatchFolder() =>
        Assert.Equal("id", ManifestError(GoodManifest.Replace("\"ID\"", "\"other\"").Replace("\"id\": \"bad\"", "\"id\": \"other\"")).Field);

    [Fact]
    public void SyntaxErrorGivesLine()
    {
        var e = ManifestError(GoodManifest.Replace("\"kind\": \"perf\",", "\"kind\": perf,"));
        Assert.Equal("(syntax)", e.Field);
        Assert.Contains("line 2", e.Problem);
    }

    [Fact]
    public void ComplexityNeedsSizePlaceholderAndSaneBounds()
    {
        var complexity = GoodManifest.Replace("\"process\": { \"exit\": \"nonzero\", \"output\": [\"boom\"] }",
            "\"complexity\": { \"metric\": \"t\", \"sizes\": [1, 2, 4], \"reproducedMin\": 1.7, \"cleanMax\": 1.3 }");
        Assert.Equal("cases[0].args", ManifestError(complexity).Field);
        var inverted = complexity.Replace("\"args\": [\"x\"]", "\"args\": [\"{n}\"]").Replace("1.3", "1.9");
        Assert.Equal("cases[0].signature.complexity.cleanMax", ManifestError(inverted).Field);
    }

    [Fact]
    public void ExpectedFileMustCoverEveryDefaultCell()
    {
        var file = Write("partial", GoodManifest, """
            { "repro": "partial", "cells": [ { "case": "main", "variant": "bug", "subject": "mono", "outcome": "reproduced", "reason": "r" } ] }
            """);
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(ExpectedFile.PathFor(_root, "partial"), Manifest.Load(file)));
        Assert.Equal("cells", e.Field);
        Assert.Contains("main/bug/net10", e.Problem);
    }

    [Fact]
    public void ExpectedOutcomeMustBeKnown()
    {
        var file = Write("typo", GoodManifest, GoodExpected("typo").Replace("\"clean\"", "\"passed\""));
        var e = Assert.Throws<InputException>(() => ExpectedFile.Load(ExpectedFile.PathFor(_root, "typo"), Manifest.Load(file)));
        Assert.Equal("cells[1].outcome", e.Field);
        Assert.Contains("wrong-failure", e.Problem);
    }

    [Fact]
    public void OneBrokenReproDoesNotStopTheOthers()
    {
        Write("good", GoodManifest);
        Write("broken", GoodManifest.Replace("\"kind\": \"perf\"", "\"kind\": \"slow\""));
        Directory.CreateDirectory(Path.Combine(_root, "repros", "empty"));
        var catalog = Catalog.Load(_root);
        Assert.Equal(["good"], catalog.Entries.Select(e => e.Manifest.Id));
        Assert.Equal(2, catalog.Errors.Count);
        Assert.Contains(catalog.Errors, e => e.StartsWith("repros/broken/repro.json: field 'kind': 'slow' is not one of"));
        Assert.Contains(catalog.Errors, e => e.StartsWith("repros/empty/repro.json: field '(file)'"));
    }

    [Fact]
    public void TheCorpusItselfValidates()
    {
        var root = AppContext.BaseDirectory;
        while (!Directory.Exists(Path.Combine(root, "repros"))) root = Path.GetDirectoryName(root)!;
        var catalog = Catalog.Load(root);
        Assert.Empty(catalog.Errors);
        Assert.NotEmpty(catalog.Entries);
    }
}
