using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.LostMemory;

namespace Corpus.Harness.Tests;

/// <summary>
/// Facts the repros' Pester files read instead of text: who holds a leaked section (the shmem family's heldBy: under
/// Wine the program and wineserver), and what a fixture case's program said it saw (the fixture family's matched).
/// </summary>
public sealed class FactsOfLeaksAndFixturesTests
{
    private static string RepoRoot
    {
        get
        {
            var root = AppContext.BaseDirectory;
            while (!Directory.Exists(Path.Combine(root, "repros"))) root = Path.GetDirectoryName(root)!;
            return root;
        }
    }

    private static SharedObject Section(int n, long mapped, params Holder[] heldBy) => new()
    {
        Kind = ObjectKind.WineSection, Name = $"tmpmap-{n:x8}", Target = $"/tmp/wine-Q5aTHS/server-fe00-b204de/tmpmap-{n:x8} (deleted)",
        Deleted = true, Device = "0:42", Inode = (ulong)n, SizeBytes = 64 << 20, AllocatedBytes = 64 << 20, Fds = [10 + n],
        MappedBytes = mapped, HeldBy = heldBy,
    };

    [Fact]
    public void UnderWineTheProgramsUnmappedSectionsAreHeldByItAndByWineserver()
    {
        var program = new Holder { Pid = 300, Command = "filemapping_lea", FdCount = 1 };
        var server = new Holder { Pid = 200, Command = "wineserver64", FdCount = 1 };
        // 8 leaked sections, plus Wine's shared user data page, which both map: it is not held by descriptor only.
        var objects = Enumerable.Range(1, 8).Select(i => Section(i, 0, server, program))
            .Append(Section(9, 4096, server with { MappedBytes = 4096 }, program with { MappedBytes = 4096 })).ToList();
        var entry = new ProcessEntry { Pid = 300, Command = "filemapping_lea", CommandLine = "", Objects = objects };

        var holders = LeakHolder.Of(entry);

        Assert.Equal([new LeakHolder(300, "filemapping_lea", true, 8, 0), new LeakHolder(200, "wineserver64", false, 8, 0)], holders);
    }

    [Fact]
    public void WithoutTheCrossProcessViewTheProgramStillNamesItselfAndNothingHeldNamesNobody()
    {
        var lone = new ProcessEntry { Pid = 7, Command = "a.out", CommandLine = "", Objects = [Section(1, 0), Section(2, 0)] };
        Assert.Equal([new LeakHolder(7, "a.out", true, 2, 0)], LeakHolder.Of(lone));
        Assert.Empty(LeakHolder.Of(null));
        Assert.Empty(LeakHolder.Of(lone with { Objects = [Section(1, 4096)] }));
    }

    [Fact]
    public void HeldByIsAFactOfTheShmemFamilyInFactsJson()
    {
        var facts = new LeakFacts(512, 512, 7.4, 8, 512, 0, 512.9, "cgroup", false)
        {
            HeldBy = [new LeakHolder(300, "filemapping_lea", true, 8, 0), new LeakHolder(200, "wineserver64", false, 8, 0)],
        };
        var json = System.Text.Json.JsonSerializer.Serialize<object>(facts, global::Corpus.Harness.Report.FactsWriter.JsonOptions);
        Assert.Contains("\"heldBy\": [", json);
        Assert.Contains("\"command\": \"wineserver64\"", json);
        Assert.Contains("\"program\": false", json);
        Assert.Contains("\"objects\": 8", json);
        Assert.Contains("\"mapped\": 0", json);
    }

    private sealed class OneRun(CaseSpec cs, string stdout) : FakeRunLauncher(cs)
    {
        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured) =>
            Exited(new RunResult(0, null, false, false, 0.07, 3 << 20, stdout, "", "", "", "", []));
    }

    [Theory]
    [InlineData("bug", "REPRO-REACHED fixture seen: ImageList = 00 69 00 6f")]
    [InlineData("fix", "REPRO-REACHED fixture seen: NGenService without Roots")]
    public async Task AFixtureCaseRecordsTheLineItsProgramSawAsAFact(string variant, string seen)
    {
        // The real case's signature, and the reader's output as Windows writes it (CRLF).
        var cs = Manifest.Load(Path.Combine(RepoRoot, "repros", "ngen-imagelist-corruption", "repro.json")).Cases.Single(c => c.Id == "fixture");
        var cell = new CellResult { Key = new CellKey("ngen-imagelist-corruption", "fixture", variant, "wine"), Rerun = "" };

        var v = await new FixtureFamily().RunAsync(new OneRun(cs, $"REPRO-REACHED start\r\n{seen}\r\nREPRO-DONE\r\n"), cell);

        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Equal([seen, "REPRO-DONE"], ((ProcessFacts)v.Facts!).Matched);
    }
}
