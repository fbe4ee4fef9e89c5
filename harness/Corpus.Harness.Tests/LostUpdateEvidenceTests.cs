using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The lostUpdate evidence family: eventring.py's output parsed, judged against the spec, and the whole path run
/// for real (a program that records into the ring and aborts, its core, gdb and the script, through the runner).
/// </summary>
public sealed class LostUpdateEvidenceTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-lostupdate-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    // eventring.py on the core of a forced refcount-lost-update run under ASan.
    private const string RealOutput = """
        crashing thread LWP 12256
        eventring at 0x562915d05ac0: 3 threads, 5 events recorded, 5 kept
        lost updates: 1 (1 increments, 0 decrements overwritten)
        lost update #1: obj 0x603000000050 LWP 12256 exchange read 1, found 2, wrote 1: 1 increment overwritten (before the first delete)
          between its read and its write: LWP 12255 addref 1 -> 2
        delete: obj 0x603000000050 LWP 12255
        """;

    private static LostUpdateSpec Spec(string lost = "increment", bool beforeDelete = true) => new(lost, beforeDelete, "eventring.py");

    [Fact]
    public void ParsesTheLostIncrementAndTheDelete()
    {
        var facts = EventRingFacts.Parse(RealOutput);
        Assert.True(facts.RingFound);
        Assert.Equal(12256, facts.CrashThread);
        var lost = Assert.Single(facts.Lost);
        Assert.Equal(("0x603000000050", 12256, 2L, 1L, true), (lost.Object, lost.Thread, lost.Found, lost.Wrote, lost.BeforeDelete));
        Assert.True(lost.LostIncrement);
        Assert.Equal([("0x603000000050", 12255)], facts.Deletes);
        Assert.Null(facts.Mismatch(Spec()));
    }

    [Fact]
    public void ALostDecrementIsNotTheLostIncrementThatDeletes()
    {
        var facts = EventRingFacts.Parse(RealOutput.Replace("found 2, wrote 1", "found 0, wrote 1"));
        Assert.Contains("none of them a lost increment", facts.Mismatch(Spec()));
        Assert.Null(facts.Mismatch(Spec("any")));
    }

    [Fact]
    public void ALostUpdateAfterTheDeleteDoesNotExplainIt() =>
        Assert.Contains("precedes the first delete",
                        EventRingFacts.Parse(RealOutput.Replace(" (before the first delete)", "")).Mismatch(Spec()));

    [Fact]
    public void NoRingOrNoLostUpdateIsNamed()
    {
        Assert.Contains("no event ring", EventRingFacts.Parse("crashing thread LWP 1\nno event ring in this core").Mismatch(Spec()));
        Assert.Contains("shows no lost update",
                        EventRingFacts.Parse("eventring at 0x1: 5 threads, 9 events recorded, 9 kept\nlost updates: 0").Mismatch(Spec()));
    }

    /// <summary>
    /// The ring of a wine-race bug run under a stress gate (two gates at once, 2026-11-26), cut to the object's 44 events
    /// with their real stamps: LWP 208's exchange wrote 1 over 2 and was stamped after LWP 212's delete, yet 212's last
    /// release found the 1 it wrote, where 212 had left 2. The exchange's write precedes the delete: the lost increment
    /// the evidence asks for, which the stamps alone put after it (a wrong-failure in both clones of that stress run).
    /// </summary>
    [Fact]
    public void AnExchangeStampedAfterTheDeleteItCausedStillPrecedesIt()
    {
        var ring = Path.Combine(RepoRoot(), "harness", "Corpus.Harness.Tests", "Fixtures", "rings", "wine-race-late-exchange-stamp.bin");
        var r = ToolRunner.Instance.Run("python3", [Path.Combine(RepoRoot(), "harness", "native", "eventring", "eventring.py"), ring], TimeSpan.FromMinutes(1));
        Assert.True(r.ExitCode == 0, r.Stderr);
        Assert.Contains("stamped after the first delete, written before it: LWP 212 left 2, then its release found 1, the exchange's write", r.Stdout);
        var facts = EventRingFacts.Parse(r.Stdout);
        var lost = Assert.Single(facts.Lost);
        Assert.Equal((208, 2L, 1L, true), (lost.Thread, lost.Found, lost.Wrote, lost.BeforeDelete));
        Assert.Null(facts.Mismatch(Spec()));
    }

    private static string RepoRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "harness", "native", "eventring", "eventring.py"))) return d.FullName;
        throw new InvalidOperationException("no corpus checkout above " + AppContext.BaseDirectory);
    }

    private Manifest WriteRepro(string capture)
    {
        var ring = Path.Combine(_root, "harness", "native", "eventring");
        Directory.CreateDirectory(ring);
        foreach (var f in new[] { "eventring.h", "eventring.py" })
            File.Copy(Path.Combine(RepoRoot(), "harness", "native", "eventring", f), Path.Combine(ring, f));
        var dir = Path.Combine(_root, "repros", "ring");
        Directory.CreateDirectory(Path.Combine(dir, "cpp"));
        File.WriteAllText(Path.Combine(dir, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(ring LANGUAGES CXX)
            set(CMAKE_CXX_STANDARD 17)
            add_executable(ring ring.cpp)
            target_include_directories(ring PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../../../harness/native/eventring)
            """);
        // The bug variant records an exchange that wrote 1 over 2, then a delete; both variants then abort.
        File.WriteAllText(Path.Combine(dir, "cpp", "ring.cpp"), """
            #include <cstdio>
            #include <cstdlib>
            #include <cstring>
            #include "eventring.h"
            int main(int argc, char** argv) {
                eventring::Start("1 xchg,3 addref,5 delete");
                static int obj;
                bool bug = argc > 1 && std::strcmp(argv[1], "bug") == 0;
                uint64_t t0 = eventring::Now();
                eventring::Record(3, &obj, 1, 2);
                eventring::Record(1, &obj, bug ? 2 : 1, 1, t0);
                eventring::Record(5, &obj, 0, 0);
                std::puts("boom");
                std::fflush(stdout);
                std::abort();
            }
            """);
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "ring", "title": "t", "category": "race", "references": ["r"], "languages": ["cpp"],
              "subjects": ["linux"], "variants": ["bug", "fix"], "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 20, "memoryMB": 256 },
              "cases": [ { "id": "main", "program": "cmake:ring", "args": ["{variant}"],
                           "signature": { "process": { "exit": "SIGABRT", "output": ["boom"] }, "lostUpdate": { "lost": "increment" } }
                           {{capture}} } ] }
            """);
        return Manifest.Load(Path.Combine(dir, "repro.json"));
    }

    [Fact]
    public async Task TheRingInARealCoreProvesTheLostUpdateOrTurnsTheCrashIntoAWrongFailure()
    {
        var m = WriteRepro(""", "capture": { "crash": { "core": true } }""");
        Assert.EndsWith(Path.Combine("harness", "native", "eventring", "eventring.py"), m.Cases[0].Signature.Get<LostUpdateSpec>("lostUpdate")!.Script);
        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance);
        var linux = SubjectKinds.Default.Resolve("linux", _root);
        var bug = await runner.RunAsync(m, m.Cases[0], "bug", linux, null);
        Assert.True(bug.Outcome == Outcome.Reproduced, bug.Detail + string.Join("; ", bug.CaptureErrors));
        Assert.Contains("writing back 1 over 2", bug.Detail);
        Assert.True(File.Exists(Path.Combine(bug.ArtifactDir!, "run", "eventring.txt")));
        // Same crash, no overwritten increment in the ring: not this bug.
        var fix = await runner.RunAsync(m, m.Cases[0], "fix", linux, null);
        Assert.Equal(Outcome.WrongFailure, fix.Outcome);
        Assert.Contains("the event ring shows no lost update", fix.Detail);
    }

    [Fact]
    public void TheEvidenceNeedsTheCoreAndNamesTheField()
    {
        var e = Assert.Throws<InputException>(() => WriteRepro(""));
        Assert.Contains("signature.lostUpdate", e.Message);
        Assert.Contains("crash capture", e.Message);
    }
}
