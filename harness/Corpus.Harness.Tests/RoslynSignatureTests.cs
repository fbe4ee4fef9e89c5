using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Tests;

/// <summary>
/// The ref-accessor loop's signature (repros/roslyn-ref-accessor-loop) against made-up runs and dump facts: no
/// compiler here has the bug (2.6.x is not in the NuGet copy), so this is the only place it is exercised.
/// </summary>
public sealed class RoslynSignatureTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("corpus-refloop-").FullName;
    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static readonly Manifest Repro =
        Manifest.Load(Path.Combine(RoslynTriggerTests.Root, "repros", "roslyn-ref-accessor-loop", "repro.json"));

    private static Signature Sig(string caseId) => Repro.Cases.Single(c => c.Id == caseId).Signature;

    private static EvidenceResult Stacks(string caseId, CellResult cell) => Stacks(caseId, cell, out _);

    /// <summary>The stacks check, with the capture-only runs it asks for recorded (they capture nothing more here).</summary>
    private static EvidenceResult Stacks(string caseId, CellResult cell, out IReadOnlyList<string> recaptures)
    {
        var cs = Repro.Cases.Single(c => c.Id == caseId);
        var runs = new NothingCaptured(cs);
        recaptures = runs.Asked;
        return new StacksEvidence().CheckAsync(new EvidenceContext(cs, null!, cell, null!, runs, null)).Result;
    }

    private sealed class NothingCaptured(CaseSpec cs) : FakeRunLauncher(cs)
    {
        public readonly List<string> Asked = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            Assert.True(untilCaptured);
            Asked.Add(label);
            return Exited(new RunResult(0, null, false, false, 1, 1, "", "", "o", "e", "cgroup", []));
        }
    }

    private static RunResult Run(bool timedOut, int? exit, string stdout, double seconds, Func<double, long> memory)
    {
        var samples = Enumerable.Range(0, (int)(seconds * 10)).Select(i => new MemorySample(i / 10.0, memory(i / 10.0))).ToList();
        return new RunResult(exit, null, timedOut, false, seconds, samples.Max(s => s.Bytes), stdout, "", "o", "e", "cgroup", samples);
    }

    /// <summary>2.6.0 as the write-up describes it: the parse never returns and memory climbs (~30 MB/s here).</summary>
    private static RunResult Looping() =>
        Run(true, null, "REPRO-REACHED roslyn-loaded 2.6.0\nREPRO-REACHED compile-start chars=77\n", 10.1, t => (30L << 20) + (long)(t * (30 << 20)));

    [Theory]
    [InlineData("writeup")]
    [InlineData("thread")]
    public void ALoopThatAllocatesUntilTheBudgetIsTheBug(string caseId)
    {
        var (outcome, detail) = ProcessFamily.Classify(Sig(caseId), Looping());
        Assert.Equal(Outcome.Reproduced, outcome);
        Assert.Contains("timeout", detail);
        Assert.Equal(30.0, ExponentialSweep.GrowthMBPerSec(Looping().Memory)!.Value, 0);
    }

    /// <summary>On a CPU fast enough to allocate the 2 GB cap inside the 10 s of CPU (an Intel Xeon walk reached 1,465 MB at
    /// +126.6 MB/s), the cap ends the loop first: that is the write-up's "ate all memory", the bug all the same.</summary>
    [Theory]
    [InlineData("writeup")]
    [InlineData("thread")]
    public void ALoopThatMeetsTheMemoryCapFirstIsTheBugToo(string caseId)
    {
        var capped = Looping() with { TimedOut = false, MemoryCapped = true };
        var (outcome, detail) = ProcessFamily.Classify(Sig(caseId), capped);
        Assert.Equal(Outcome.Reproduced, outcome);
        Assert.StartsWith("memory-cap", detail);
        // The growth bound still holds there (which endings "budget" takes: ExitFormTests).
        var flat = Run(false, null, "REPRO-REACHED compile-start chars=77\n", 10.1, _ => 2048L << 20) with { MemoryCapped = true };
        Assert.Equal(Outcome.WrongFailure, ProcessFamily.Classify(Sig(caseId), flat).Item1);
    }

    [Fact]
    public void AHangThatDoesNotAllocateIsAnotherBug()
    {
        var spinning = Run(true, null, "REPRO-REACHED compile-start chars=77\n", 10.1, _ => 30L << 20);
        var (outcome, detail) = ProcessFamily.Classify(Sig("writeup"), spinning);
        Assert.Equal(Outcome.WrongFailure, outcome);
        Assert.Contains("memory grew 0.0 MB/s, less than 5 MB/s", detail);
    }

    [Fact]
    public void CS0106WellInsideTheBudgetIsClean()
    {
        var fixedRun = Run(false, 0, "DIAGNOSTIC CS0106 error (1,57): The modifier 'ref' is not valid for this item\n"
                                     + "DIAGNOSTIC-IDS CS0106,CS8341\nMETRIC {\"compile_s\": 0.6}\nREPRO-DONE\n", 1.2, _ => 40L << 20);
        Assert.Equal(Outcome.Clean, ProcessFamily.Classify(Sig("writeup"), fixedRun).Item1);
        var noDiagnostic = fixedRun with { Stdout = "DIAGNOSTIC-IDS none\nREPRO-DONE\n" };
        Assert.Equal(Outcome.WrongFailure, ProcessFamily.Classify(Sig("writeup"), noDiagnostic).Item1);
    }

    /// <summary>A run on the case's CPU clock: its CPU seconds, and whether it reached the wall cap first (starved).</summary>
    private static RunResult OnCpuClock(RunResult run, double cpu, bool starved = false) =>
        run with { CpuBudget = 10, CpuSeconds = cpu, Starved = starved, TimedOut = run.TimedOut && !starved };

    private const string Fixed = "DIAGNOSTIC CS0106 error (1,57): The modifier 'ref' is not valid for this item\n"
                                 + "DIAGNOSTIC-IDS CS0106,CS8341\nMETRIC {\"compile_s\": 0.6}\nREPRO-DONE\n";

    [Fact]
    public void TheBudgetIsOnTheCpuClock()
    {
        // A starved host slows the fixed compiler, not the CPU it needs: only the CPU clock tells a slow run from a hung one.
        Assert.All(Repro.Cases, c => Assert.True(c.Budget.CpuClock, c.Id));
    }

    [Fact]
    public void OnTheCpuClockTheLoopIsTheBugOnceItsCpuBudgetIsSpent()
    {
        var (outcome, detail) = ProcessFamily.Classify(Sig("writeup"), OnCpuClock(Looping(), cpu: 10.02));
        Assert.Equal(Outcome.Reproduced, outcome);
        Assert.Contains("timeout", detail);
    }

    [Fact]
    public void AStarvedFixedCompilerIsInconclusiveNeverTheBug()
    {
        // Measured beside eight busy sessions: a fixed compiler's start grows its memory at ~19 MB/s, so growth alone
        // matches the loop; only the CPU it got (3.1 s in its 30 s wall cap) says the budget was never spent.
        var starved = OnCpuClock(Run(true, null, "REPRO-REACHED compile-start chars=77\n", 30, t => (30L << 20) + (long)(t * (19 << 20))),
                                 cpu: 3.1, starved: true);
        Assert.Equal("starved", starved.Status);
        var (outcome, detail) = ProcessFamily.Classify(Sig("writeup"), starved);
        Assert.Equal(Outcome.Inconclusive, outcome);
        Assert.Contains("starved: 3.10 s of CPU in 30.0 s, its wall cap; the budget is 10 s of CPU", detail);
    }

    [Fact]
    public void OnTheCpuClockTheCleanBoundCountsCpuSeconds()
    {
        // 9.6 s of wall on a busy host, 2.1 s of CPU: clean; 9.4 s of CPU would be too close to the budget.
        var slow = OnCpuClock(Run(false, 0, Fixed, 9.6, _ => 40L << 20), cpu: 2.1);
        var (outcome, detail) = ProcessFamily.Classify(Sig("writeup"), slow);
        Assert.Equal(Outcome.Clean, outcome);
        Assert.Contains("exit 0 in 9.60 s (2.10 s of CPU)", detail);
        var (heavy, why) = ProcessFamily.Classify(Sig("writeup"), slow with { CpuSeconds = 9.4 });
        Assert.Equal(Outcome.WrongFailure, heavy);
        Assert.Contains("used 9.40 s of CPU, more than 9 s", why);
    }

    /// <summary>The process family's runs: starved ones first, then what the script ends with.</summary>
    private sealed class Runs(CaseSpec cs, Queue<RunResult> script) : FakeRunLauncher(cs)
    {
        public readonly List<string> Labels = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            Labels.Add(label);
            return Exited(script.Dequeue());
        }
    }

    [Fact]
    public async Task AStarvedRunIsMeasuredAgainAndAlwaysStarvedIsInconclusive()
    {
        var cs = Repro.Cases.Single(c => c.Id == "thread");
        var starved = OnCpuClock(Run(false, null, "REPRO-REACHED compile-start chars=30\n", 30, _ => 40L << 20), cpu: 2.5, starved: true);
        var finished = OnCpuClock(Run(false, 0, Fixed, 12.5, _ => 40L << 20), cpu: 1.9);
        var cell = new CellResult { Key = new CellKey("roslyn-ref-accessor-loop", "thread", "bug", "roslyn:5.12.0"), Rerun = "" };

        var once = new Runs(cs, new([starved, finished]));
        var v = await new ProcessFamily().RunAsync(once, cell);
        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Equal(["run", "run2"], once.Labels);
        Assert.Contains("before it, starved: 2.50 s of CPU", v.Detail);
        Assert.Single(((ProcessFacts)v.Facts!).Starved);

        var always = new Runs(cs, new([starved, starved, starved]));
        var never = await new ProcessFamily().RunAsync(always, cell);
        Assert.Equal(Outcome.Inconclusive, never.Outcome);
        Assert.Equal(ProcessFamily.StarvedRuns, always.Labels.Count);
        Assert.Contains($"after {ProcessFamily.StarvedRuns} runs the host starved", never.Detail);
    }

    private CellResult Reproduced(params string[] parserFrames)
    {
        // DumpFacts' format: one thread per managed thread, its frames innermost first.
        var facts = Path.Combine(_dir, "snapshot-0.facts.json");
        File.WriteAllText(facts, System.Text.Json.JsonSerializer.Serialize(new
        {
            threads = new object[]
            {
                new { managedThreadId = 1, frames = parserFrames },
                new { managedThreadId = 2, frames = new[] { "System.GC.RunFinalizers()" } },
            },
        }));
        var cell = new CellResult { Key = new CellKey("roslyn-ref-accessor-loop", "writeup", "bug", "roslyn:2.6.0"), Rerun = "" };
        cell.Captures.Add(new CaptureRecord("createdump", Path.Combine(_dir, "snapshot-0.core"), 300L << 20, 1.5, 8.7,
                                            CoreClrCreateDump.ReadThreads(facts), "memory 257 MB ≥ 256 MB, 7.6 s after the marker"));
        cell.Outcome = Outcome.Reproduced;
        return cell;
    }

    private const string P = "Microsoft.CodeAnalysis.CSharp.Syntax.InternalSyntax.LanguageParser.";

    [Fact]
    public void TheDumpMustShowTheParserInParseAccessorList()
    {
        var cell = Reproduced($"{P}EatToken()", $"{P}ParseAccessorList(Microsoft.CodeAnalysis.CSharp.Syntax.InternalSyntax.SyntaxToken ByRef, …)",
                              $"{P}ParsePropertyDeclaration(…)", $"{P}ParseMemberDeclarationOrStatement(…)");
        var held = Stacks("writeup", cell);
        Assert.Equal(EvidenceStatus.Holds, held.Status);
        Assert.Equal((1, 1), (((StacksFacts)held.Facts!).Hits, ((StacksFacts)held.Facts!).Snapshots));
    }

    [Fact]
    public void AHangElsewhereInTheParserIsNotThisBug()
    {
        var cell = Reproduced($"{P}ParseAttributeDeclaration()", $"{P}ParseAttributes(…)");
        var found = Stacks("writeup", cell);
        Assert.Equal(EvidenceStatus.Fails, found.Status);
        Assert.Contains("no snapshot shows /LanguageParser\\.ParseAccessorList/", found.Detail);
        Assert.Equal(Outcome.WrongFailure, CellRunner.Compose(new Verdict(Outcome.Reproduced, "hung"), [found]).Item1);
    }

    [Fact]
    public void ADumpThatWasNeverTakenIsAnErrorNamingTheCaptureNotAWrongFailure()
    {
        // Issue 25: evidence the environment kept from being captured says nothing about the bug.
        var cell = new CellResult { Key = new CellKey("roslyn-ref-accessor-loop", "writeup", "bug", "roslyn:2.6.0"), Rerun = "" };
        cell.CaptureErrors.Add("run: createdump: no createdump beside the runtime");
        var found = Stacks("writeup", cell);
        Assert.Equal(EvidenceStatus.Broken, found.Status);
        Assert.Contains("no stack snapshot was taken (run: createdump: no createdump beside the runtime)", found.Detail);
        var (outcome, detail) = CellRunner.Compose(new Verdict(Outcome.Reproduced, "hung"), [found]);
        Assert.Equal(Outcome.Error, outcome);
        Assert.Contains("createdump", detail);
        // A capture that was taken but carried no stacks is no verdict either.
        cell.Captures.Add(new CaptureRecord("createdump", Path.Combine(_dir, "snapshot-0.core"), 300L << 20, 1.5, 8.7, [], "no threads read"));
        Assert.Equal(EvidenceStatus.Broken, Stacks("writeup", cell).Status);
    }

    /// <summary>
    /// A lab run's roslyn:4.8.0 dumps (2026-11-26): ClrMD unwound none of the threads, the parsing thread a lone
    /// "[Managed] 0x0". Such a snapshot shows nothing about where the parser was: an error naming it, not a wrong-failure.
    /// </summary>
    [Fact]
    public void ASnapshotWhoseStacksCouldNotBeWalkedIsAnErrorNotAWrongFailure()
    {
        var cell = new CellResult { Key = new CellKey("roslyn-ref-accessor-loop", "writeup", "bug", "roslyn:2.6.0"), Rerun = "" };
        cell.Runs.Add(new RunSummary("n20", "SIGKILL", 10.1, 18L << 20, ProgramMetrics.None, "cgroup") { N = 20 });
        for (var i = 0; i < 2; i++)
            cell.Captures.Add(new CaptureRecord("createdump", Path.Combine(_dir, $"snapshot-{i}.core"), 300L << 20, 1.5, 8.7,
                [new ThreadStack("managed 1", ["[Managed] 0x0"]), new ThreadStack("managed 2", ["[Runtime] DebuggerU2MCatchHandlerFrame"])], null) { Run = "n20" });
        var found = Stacks("writeup", cell, out var recaptures);
        Assert.Equal(EvidenceStatus.Broken, found.Status);
        Assert.Contains("no stack snapshot carried a stack that could be walked (2 with threads, none with a named frame)", found.Detail);
        // Taken again first, as often as the capture's retakes allow (CaptureRetakeTests runs them for real).
        Assert.Equal(["recapture1-n20", "recapture2-n20"], recaptures);
        Assert.Equal(Outcome.Error, CellRunner.Compose(new Verdict(Outcome.Reproduced, "hung"), [found]).Item1);
    }

    [Fact]
    public void TheBuggyCompilersAreDefaultSubjectsWithAReproducedExpectation()
    {
        var expected = ExpectedFile.Load(ExpectedFile.PathFor(RoslynTriggerTests.Root, Repro.Id), Repro);
        foreach (var v in new[] { "roslyn:2.6.0", "roslyn:2.6.1" })
            Assert.Contains(expected, e => e.Key.Subject == v && e.Outcome == Outcome.Reproduced);
    }

    [Fact]
    public async Task AVersionItsFirstCellCannotProvisionIsReportedNotGated()
    {
        // Resolving restores nothing, so a version NuGet lacks is first found missing when its cell provisions it; the
        // cell must still be reported, not gated (a fresh clone's gate once failed four such cells as differing).
        var subject = new Subjects.RoslynKind().Resolve("roslyn:2.6.0", null, _dir);
        Assert.Null(subject.Unavailable);
        var cache = Directory.CreateDirectory(Path.Combine(_dir, ".cache", "roslyn")).FullName;
        File.WriteAllText(Path.Combine(cache, "2.6.0.unavailable"),
                          $"feeds: {string.Join(";", Subjects.RoslynKind.Feeds())}\ncannot restore Microsoft.CodeAnalysis.CSharp 2.6.0: planted\n");
        var cs = Repro.Cases.Single(c => c.Id == "writeup");
        var e = new Expectation(new CellKey(Repro.Id, cs.Id, "bug", "roslyn:2.6.0"), Outcome.Reproduced, "has the loop", null);
        var cell = await new CellRunner(new RunOptions(_dir, Path.Combine(_dir, "artifacts", "run"), Keep: true, _ => { }),
                                        new Builder(_dir, ToolRunner.Instance), ToolRunner.Instance)
            .RunAsync(Repro, cs, "bug", subject, e);
        Assert.Equal(Outcome.Unsupported, cell.Outcome);
        Assert.Contains("planted", cell.Detail);
        Assert.Equal(GateStatus.Unchecked, cell.Gate);
    }

    [Fact]
    public void AnUnprovisionableVersionIsReportedNotGated()
    {
        var subject = new Subject("roslyn:2.6.0", new Subjects.RoslynKind(), "/x", null, "cannot restore … NU1102 …");
        var e = new Expectation(new CellKey("r", "c", "bug", "roslyn:2.6.0"), Outcome.Reproduced, "has the loop", null);
        var cell = new CellResult { Key = e.Key, Expected = e, Rerun = "", Outcome = Outcome.Unsupported, Gate = GateStatus.Unchecked };
        Assert.True(subject.Kind.UnavailableIsUnchecked);
        Assert.False(RunExit.Fails(cell));
        Assert.True(RunExit.Fails(new CellResult { Key = e.Key, Rerun = "", Outcome = Outcome.Unsupported, Gate = GateStatus.Unchecked }));
    }
}
