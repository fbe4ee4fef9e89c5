using System.Text.Json.Nodes;

namespace Corpus.Harness.Tests;

/// <summary>
/// `corpus matrix` and `corpus bisect --from` through Program.Main on a throwaway corpus whose cells are Windows-only,
/// so every cell is `unsupported` at once, without building or running anything.
/// </summary>
[Collection(nameof(ConsoleCollection))]
public sealed class MatrixCommandTests : IDisposable
{
    private readonly TestCorpus _corpus = new();

    public MatrixCommandTests() => _corpus.Write("a");

    public void Dispose() => _corpus.Dispose();

    private (int Exit, string Out, string Err) Corpus(params string[] args) => _corpus.Main(args);

    [Fact]
    public void MatrixWritesItsTableJsonAndPictureInTheRun()
    {
        var (exit, output, err) = Corpus("matrix", "--subjects", "net10,mono", "--case", "one", "--run-id", "m1");
        // Unsupported cells are a finding, not a failure of the matrix.
        Assert.True(exit == 0, output + err);
        var run = Path.Combine(_corpus.Root, "artifacts", "m1");
        Assert.Matches(@"(?m)^repro:case\s+net10.*\s+mono", output);
        Assert.Matches(@"(?m)^a:one\s+unsupported: .*unsupported: ", output);
        Assert.Matches(@"(?m)^a:one/fix\s+unsupported", output);
        var json = JsonNode.Parse(File.ReadAllText(Path.Combine(run, "matrix.json")))!;
        Assert.Equal(["net10", "mono"], json["subjects"]!.AsArray().Select(s => s!["name"]!.GetValue<string>()));
        Assert.Equal(2, json["rows"]!.AsArray().Count);
        Assert.True(new FileInfo(Path.Combine(run, "matrix.png")).Length > 5000);
        Assert.Contains("![matrix](matrix.png)", File.ReadAllText(Path.Combine(run, "matrix.md")));
        // It is a run like any other: its summary and report are there too.
        Assert.True(File.Exists(Path.Combine(run, "summary.json")));
    }

    /// <summary>A native case on Mono and a managed case on linux: each a square that says n/a and why.</summary>
    [Fact]
    public void ACellASubjectCannotRunIsNotApplicable()
    {
        _corpus.Write("b", """
            {
              "id": "ID", "title": "t", "category": "leak", "references": ["r"], "languages": ["csharp", "cpp"], "platforms": ["windows"],
              "subjects": ["mono", "linux"], "variants": ["bug"],
              "build": { "mono": { "sources": ["src/*.cs"] }, "cmake": { "dir": "cpp" } },
              "cases": [
                { "id": "managed", "args": ["x"], "subjects": ["mono"], "signature": { "process": { "exit": "zero" } } },
                { "id": "native", "program": "cmake:t", "args": ["x"], "subjects": ["linux"], "signature": { "process": { "exit": "zero" } } }
              ]
            }
            """, """
            { "repro": "b", "cells": [
              { "case": "managed", "variant": "bug", "subject": "mono", "outcome": "unsupported", "reason": "Windows only" },
              { "case": "native", "variant": "bug", "subject": "linux", "outcome": "unsupported", "reason": "Windows only" } ] }
            """);
        var cpp = Path.Combine(_corpus.Root, "repros", "b", "cpp");
        Directory.CreateDirectory(cpp);
        File.WriteAllText(Path.Combine(cpp, "CMakeLists.txt"), "project(b)\nadd_executable(t t.cpp)\n");
        File.WriteAllText(Path.Combine(cpp, "t.cpp"), "int main() {}\n");
        var (exit, output, err) = Corpus("matrix", "--repro", "b", "--subjects", "mono,linux", "--run-id", "na");
        Assert.True(exit == 0, output + err);
        var rows = JsonNode.Parse(File.ReadAllText(Path.Combine(_corpus.Root, "artifacts", "na", "matrix.json")))!["rows"]!.AsArray();
        string? Outcome(int row, int col) => rows[row]!["squares"]![col]!["outcome"]?.GetValue<string>();
        Assert.Equal(("unsupported", null, null, "unsupported"), (Outcome(0, 0), Outcome(0, 1), Outcome(1, 0), Outcome(1, 1)));
        Assert.Contains("not on linux, which runs a native program", rows[0]!["squares"]![1]!["detail"]!.GetValue<string>());
        Assert.Matches(@"(?m)^b:native\s+n/a: a native program", output);
    }

    [Fact]
    public void WithoutSubjectsTheColumnsAreTheCasesOwn()
    {
        var (exit, output, err) = Corpus("matrix", "--case", "one", "--variant", "bug", "--run-id", "own");
        Assert.True(exit == 0, output + err);
        var json = JsonNode.Parse(File.ReadAllText(Path.Combine(_corpus.Root, "artifacts", "own", "matrix.json")))!;
        Assert.Equal(["mono", "net10"], json["subjects"]!.AsArray().Select(s => s!["name"]!.GetValue<string>()));
    }

    [Fact]
    public void MatrixRefusesAnUnknownSubject()
    {
        var (exit, _, err) = Corpus("matrix", "--subjects", "net10,nosuch");
        Assert.Equal(2, exit);
        Assert.Contains("nosuch", err);
    }

    [Fact]
    public void BisectFromAMatrixWithoutAChangeSaysSoAndExitsOne()
    {
        Assert.Equal(0, Corpus("matrix", "--subjects", "net10,mono", "--case", "one", "--variant", "bug", "--run-id", "m2").Exit);
        var (exit, output, _) = Corpus("bisect", "--from", "m2");
        Assert.Equal(1, exit);
        Assert.Contains("no change in matrix run m2: a:one/bug is unsupported on every subject that could be judged; nothing to bisect", output);
    }

    /// <summary>Subjects that cannot run the cell here are skipped one after another; with none left, it is inconclusive.</summary>
    [Fact]
    public void BisectSkipsSubjectsItCannotJudgeAndSaysSo()
    {
        var (exit, output, _) = Corpus("bisect", "--repro", "a", "--case", "one", "--variant", "bug", "--subjects", "mono,net10,net8");
        Assert.Equal(1, exit);
        Assert.Contains("skipped mono (unsupported): it cannot be judged; trying its neighbour net10", output);
        Assert.Contains("inconclusive: the ends must be reproduced or clean, got net10 unsupported and net8 unsupported (mono skipped: could not be judged)", output);
    }

    [Fact]
    public void BisectFromARunWithoutAMatrixIsBadInput()
    {
        var (exit, _, err) = Corpus("bisect", "--from", "nosuchrun");
        Assert.Equal(2, exit);
        Assert.Contains("--from nosuchrun: artifacts/nosuchrun/matrix.json does not exist (corpus matrix writes it)", err);
    }
}
