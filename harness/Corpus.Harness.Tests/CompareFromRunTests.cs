using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// `corpus compare` through the real runner on two shells: the same sweep is linear under dash and quadratic under
/// bash, so bash as the "patched" build regresses. Run once as compare runs it, then again over that run's cells
/// with --from, which must run nothing and come to the same verdict.
/// </summary>
[Collection(nameof(ConsoleCollection))]
public sealed class CompareFromRunTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-compare-from-").FullName;
    private readonly SubjectKinds _kinds = SubjectKinds.Default.With(new ShellKind(() => new CopyScript(), shells: new Dictionary<string, string>
    {
        ["shell"] = "/bin/dash", ["shell-bash"] = "/bin/bash",
    }));

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private void Write(string title = "t")
    {
        var dir = Path.Combine(_root, "repros", "sweep");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        // The work is n under dash and n² under bash, each run within 10% of it (a random draw), so a size's runs scatter.
        File.WriteAllText(Path.Combine(dir, "src", "prog.sh"), """
            n=$1
            r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
            if [ -n "$BASH_VERSION" ]; then k=2; else k=1; fi
            awk -v n="$n" -v k="$k" -v r="$r" 'BEGIN { printf "METRIC {\"t_s\": %.6f}\n", (n / 100) ^ k * 0.01 * (1 + r / 655360) }'
            echo REPRO-DONE
            """);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "sweep", "title": "{{title}}", "category": "perf", "references": ["r"], "languages": ["sh"],
              "subjects": ["shell", "shell-bash"], "variants": ["bug"], "build": { "mono": { "sources": ["src/*.sh"] } },
              "budget": { "timeoutSec": 30, "memoryMB": 256 },
              "cases": [ { "id": "grow", "args": ["{n}"],
                           "signature": { "complexity": { "metric": "t_s", "sizes": [100, 200, 400, 800], "reproducedMin": 1.5,
                                                          "cleanMax": 1.3, "repeatUnderSec": 0 },
                                          "clean": { "exit": "zero", "output": ["REPRO-DONE"] } } } ] }
            """);
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.WriteAllText(Path.Combine(_root, "expected", "sweep.json"), """
            { "repro": "sweep", "cells": [
              { "case": "grow", "variant": "bug", "subject": "shell", "outcome": "clean", "reason": "linear under dash" },
              { "case": "grow", "variant": "bug", "subject": "shell-bash", "outcome": "reproduced", "reason": "quadratic under bash" } ] }
            """);
    }

    private async Task<(int Exit, string Out, string Err)> CompareAsync(params string[] more)
    {
        var args = Args.Parse(["compare", "--base", "shell", "--new", "shell-bash", "--root", _root, .. more], _kinds);
        var (oldOut, oldErr) = (Console.Out, Console.Error);
        var (o, e) = (new StringWriter(), new StringWriter());
        Console.SetOut(o);
        Console.SetError(e);
        try { return (await Compare.RunAsync(_root, args, SignatureFamilies.Default, _kinds, ToolRunner.Instance), o.ToString(), e.ToString()); }
        finally
        {
            Console.SetOut(oldOut);
            Console.SetError(oldErr);
        }
    }

    private JsonElement CellOf(string run) =>
        JsonDocument.Parse(File.ReadAllText(Path.Combine(_root, "artifacts", run, "compare.json"))).RootElement.GetProperty("cells")[0];

    [Fact]
    public async Task OverAFinishedRunItRunsNothingAndComesToTheSameVerdict()
    {
        Write();
        var (exit, output, err) = await CompareAsync("--run-id", "ran");
        Assert.True(exit == 1, output + err);
        var ran = CellOf("ran");
        Assert.Equal("regressed", ran.GetProperty("verdict").GetString());
        // A regression keeps its evidence: the runs of both sides, although each matched what expected/ says of it.
        foreach (var side in new[] { "base", "new" })
        {
            var facts = ran.GetProperty(side).GetProperty("rounds")[0].GetProperty("facts").GetString()!;
            Assert.NotEmpty(Directory.GetFiles(Path.GetDirectoryName(Path.Combine(_root, facts))!, "*.stdout", SearchOption.AllDirectories));
        }

        (exit, output, err) = await CompareAsync("--run-id", "again", "--from", "ran");
        Assert.True(exit == 1, output + err);
        Assert.Contains("round 1 from run ran", err);
        Assert.Contains("round 1 (run ran): shell clean", err);
        var again = CellOf("again");
        Assert.Equal("regressed", again.GetProperty("verdict").GetString());
        foreach (var side in new[] { "base", "new" })
            Assert.StartsWith("artifacts/ran/", again.GetProperty(side).GetProperty("rounds")[0].GetProperty("facts").GetString());
        // The same figures as the run it read: both exponents, to the digit.
        Assert.Equal(ran.GetProperty("figures").GetRawText(), again.GetProperty("figures").GetRawText());
        Assert.Empty(Directory.GetFiles(Path.Combine(_root, "artifacts", "again"), "*.stdout", SearchOption.AllDirectories));
    }

    [Fact]
    public async Task ARunOfOtherManifestsOrWithoutTheCellsIsNotTakenForThem()
    {
        Write();
        var (exit, output, err) = await CompareAsync("--run-id", "ran");
        Assert.True(exit == 1, output + err);
        Write(title: "another title");
        var e = await Assert.ThrowsAsync<InputException>(() => CompareAsync("--from", "ran"));
        Assert.Equal("checkout.manifests", e.Field);
        Assert.EndsWith(Path.Combine("ran", "summary.json"), e.File);
        Assert.Contains("run compare without --from", e.Message);

        var missing = await Assert.ThrowsAsync<InputException>(() => CompareAsync("--from", "nosuchrun"));
        Assert.Contains("run 'nosuchrun': no summary.json", missing.Message);
    }
}
