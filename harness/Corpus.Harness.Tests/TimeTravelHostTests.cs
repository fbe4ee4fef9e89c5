using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// Time travel on hosts unlike this one, planted under gdb (native/xstate_plant.c, preloaded through --env behind the
/// harness's xstate shim): a kernel whose XSAVE area is larger than gdb 13's 2696-byte buffer, as on CPUs with AMX,
/// and a host that refuses every write of a thread's extended state. The forced refcount-lost-update cell runs for
/// real through the runner each time.
/// </summary>
public sealed class TimeTravelHostTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("corpus-timetravel-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static string RepoRoot => RoslynTriggerTests.Root;

    private string Plant()
    {
        var so = Path.Combine(_dir, "xstate_plant.so");
        var gcc = ToolRunner.Instance.Run("gcc", ["-O2", "-fPIC", "-shared", "-o", so,
                                                  Path.Combine(RepoRoot, "harness", "Corpus.Harness.Tests", "native", "xstate_plant.c"), "-ldl"],
                                          TimeSpan.FromMinutes(1));
        Assert.True(gcc.ExitCode == 0, gcc.Stderr);
        return so;
    }

    private async Task<CellResult> ForcedCell(string plant, string mode)
    {
        var m = Manifest.Load(Path.Combine(RepoRoot, "repros", "refcount-lost-update", "repro.json"));
        var env = new Dictionary<string, string> { ["LD_PRELOAD"] = plant, ["XSTATE_PLANT"] = mode };
        var runner = new CellRunner(new RunOptions(RepoRoot, Path.Combine(_dir, "run-" + mode), Keep: true, _ => { }, Env: env),
                                    new Builder(RepoRoot, ToolRunner.Instance), ToolRunner.Instance);
        return await runner.RunAsync(m, m.Cases.Single(c => c.Id == "forced"), "bug", SubjectKinds.Default.Resolve("linux", RepoRoot), null);
    }

    private static EvidenceResult Walk(CellResult cell) => cell.Evidence.Single(e => e.Key == "timeTravel");

    [Fact]
    public async Task AnXsaveAreaLargerThanGdbsBufferFailsGdbAloneAndTheShimMakesTheWalkWork()
    {
        var plant = Plant();
        var cell = await ForcedCell(plant, "large");
        Assert.True(cell.Outcome == Outcome.Reproduced, cell.Detail);
        var walk = Walk(cell);
        Assert.Equal(EvidenceStatus.Holds, walk.Status);
        var facts = Assert.IsType<TimeTravelFacts>(walk.Facts);
        Assert.Matches(@"^xstate: kernel 11008 bytes, gdb 2696 bytes; writes: 0 direct, [1-9]\d* completed, 0 failed", facts.Xstate);

        // The same walk with gdb alone on the planted host fails as it did on an AMX host: recorded, then refused at the
        // first step back.
        var work = Path.Combine(cell.ArtifactDir!, "time-travel");
        var program = File.ReadAllText(Path.Combine(work, "command.txt")).Split(" --args ")[1].Trim().Split(' ');
        string[] command = ["-q", "-batch", "-nx", "-iex", "unset environment LD_PRELOAD", "-x", Path.Combine(work, "reverse_walk.py"), "--args", .. program];
        var alone = new ProcessSpec("gdb", command, work, Path.Combine(_dir, "alone.stdout"), Path.Combine(_dir, "alone.stderr"),
                                    TimeSpan.FromSeconds(60), 1L << 30, new Dictionary<string, string> { ["LD_PRELOAD"] = plant, ["XSTATE_PLANT"] = "large" });
        using var p = new ContainedProcess(alone);
        var run = await p.WaitAsync();
        Assert.Contains("instructions recorded", run.Stdout);
        Assert.DoesNotContain("LOST UPDATE", run.Stdout);
        Assert.Contains("gdb.error: Couldn't write extended state status: Bad address", run.Stderr);
    }

    [Fact]
    public async Task AHostThatRefusesTheWritesEndsTheWalkUnavailableQuotingGdbAndTheVerdictRestsOnTheSignature()
    {
        var cell = await ForcedCell(Plant(), "refuse");
        // The crash and the core's event ring prove the lost update without the walk.
        Assert.True(cell.Outcome == Outcome.Reproduced, cell.Detail);
        Assert.Equal(EvidenceStatus.Holds, cell.Evidence.Single(e => e.Key == "lostUpdate").Status);
        var walk = Walk(cell);
        Assert.Equal(EvidenceStatus.Unavailable, walk.Status);
        Assert.Contains("time travel unavailable on this host: gdb: Couldn't write extended state status: Bad address", cell.Detail);
        Assert.Contains("the verdict rests on the signature alone", cell.Detail);
        Assert.Equal("gdb: Couldn't write extended state status: Bad address", Assert.IsType<TimeTravelFacts>(walk.Facts).Failure);
    }

    [Theory]
    [InlineData("", "Traceback (most recent call last):\n  File \"w.py\", line 3\ngdb.error: Process record does not support instruction 0x62 at address 0x7f.\n",
                "gdb: Process record does not support instruction 0x62 at address 0x7f", true)]
    [InlineData("| recording\n", "pure virtual method called\nTraceback (most recent call last):\ngdb.error: No symbol \"g_forcedObject\" in current context.\n",
                "gdb: No symbol \"g_forcedObject\" in current context", false)]
    [InlineData("| recording\n| no crash within 2000 rounds of 200 instructions per thread\n", "pure virtual method called\n",
                "the walk's last line: no crash within 2000 rounds of 200 instructions per thread", false)]
    [InlineData("", "ptrace: Operation not permitted.\n", "gdb: ptrace: Operation not permitted", true)]
    [InlineData("", "/bin/sh: 1: exec: x: not found\n", "gdb's last line: /bin/sh: 1: exec: x: not found", false)]
    [InlineData("", "", "gdb printed nothing", false)]
    public void AWalkThatShowedNothingSaysWhyInGdbsOrTheScriptsWords(string stdout, string stderr, string why, bool hostCannot) =>
        Assert.Equal((why, hostCannot), TimeTravelEvidence.Why(stdout, stderr));

    /// <summary>Recordings with the given outputs in turn (stdout, stderr), each in its own file.</summary>
    private sealed class Recordings(CaseSpec cs, string dir, params (string Stdout, string Stderr)[] walks) : FakeRunLauncher(cs)
    {
        public int Made;

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured) => throw new NotSupportedException();

        public override Task<(RunResult Run, string StdoutFile)> RecordAsync(TimeTravelCapture tt)
        {
            var (stdout, stderr) = walks[Math.Min(Made++, walks.Length - 1)];
            var file = Path.Combine(dir, $"gdb-{Made}.stdout");
            File.WriteAllText(file, stdout);
            return Task.FromResult((new RunResult(0, null, false, false, 1.5, 1, stdout, stderr, file, file + ".err", "cgroup", []), file));
        }
    }

    private static async Task<(EvidenceResult Walk, int Made)> WalkWith(string dir, params (string, string)[] walks)
    {
        var cs = Manifest.Load(Path.Combine(RepoRoot, "repros", "refcount-lost-update", "repro.json")).Cases.Single(c => c.Id == "forced");
        var runs = new Recordings(cs, dir, walks);
        var cell = new CellResult { Key = new CellKey("refcount-lost-update", "forced", "bug", "linux"), Rerun = "", RecordDir = dir };
        var walk = await new TimeTravelEvidence().CheckAsync(new EvidenceContext(cs, null!, cell, null!, runs, "run0000"));
        return (walk, runs.Made);
    }

    [Fact]
    public async Task AWalkThatShowedNothingIsRecordedAgainWithinItsRetakes()
    {
        var nothing = ("| recording\n| no crash within 2000 rounds of 200 instructions per thread\n", "");
        var (walk, made) = await WalkWith(_dir, nothing, ("| recording\n| LOST UPDATE: the exchange wrote back 2 over 1\n", ""));
        Assert.Equal(EvidenceStatus.Holds, walk.Status);
        Assert.Equal((2, 2), (made, Assert.IsType<TimeTravelFacts>(walk.Facts).Attempts));

        // Still nothing after the retakes: an error that says how many recordings and why, never a verdict.
        (walk, made) = await WalkWith(_dir, nothing);
        Assert.Equal(EvidenceStatus.Broken, walk.Status);
        Assert.Equal(1 + TimedCapture.DefaultRetakes, made);
        Assert.Contains($"in {made} recordings: the walk's last line: no crash within 2000 rounds", walk.Detail);

        // A host that cannot replay is not asked again.
        (walk, made) = await WalkWith(_dir, ("", "gdb.error: Couldn't write extended state status: Bad address\n"));
        Assert.Equal((EvidenceStatus.Unavailable, 1), (walk.Status, made));
    }

    [Fact]
    public void AnUnavailableCaptureIsShownAndLeavesTheOutcome()
    {
        var (outcome, detail) = CellRunner.Compose(new Verdict(Outcome.Reproduced, "SIGABRT"),
            [EvidenceResult.Hold("lostUpdate", "ring", null), new EvidenceResult("timeTravel", EvidenceStatus.Unavailable, "time travel unavailable on this host: x")]);
        Assert.Equal(Outcome.Reproduced, outcome);
        Assert.Equal("SIGABRT; ring; time travel unavailable on this host: x", detail);
    }
}
