using Corpus.Harness.Runner;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>The hang family judges the program's own stamps: how long the UI call blocked, what released it, the evidence.</summary>
public class HangFamilyTests
{
    private const string Attached = @"gui-info .*ui_focus=(0x[1-9a-f][0-9a-f]*) ui_active=\S+ worker_focus=\1\b";
    private static readonly HangSpec Spec = new("SetFocus", 3, 20000, 0.25, 1, 200, [Attached]);

    /// <summary>Output shaped like the C# program's under Wine (the bug: 20,002 ms, released by the pool thread's exit).</summary>
    private static string Output(double call = 3.5, double ret = 20007.1, double? exit = 20005.9, string focus = "0x2005a", string workerFocus = "0x2005a") =>
        $"""
        REPRO-REACHED work-item-done t_ms=2.1 pool_tid=300
        REPRO-REACHED gui-info t_ms=3.5 ui_focus={focus} ui_active={focus} worker_focus={workerFocus} worker_active={workerFocus}
        REPRO-REACHED ui-call t_ms={call} call=SetFocus
        {(exit is null ? "" : $"REPRO-REACHED worker-exit t_ms={exit} pool_tid=300")}
        REPRO-REACHED ui-return t_ms={ret} call=SetFocus
        REPRO-DONE
        """;

    [Fact]
    public void ABlockOfAboutTheTimeoutReleasedByTheExitWithTheAttachmentIsReproduced()
    {
        var v = HangJudge.Judge(Spec, Output());
        Assert.Equal(Outcome.Reproduced, v.Outcome);
        Assert.Equal(20003.6, v.Facts.BlockMs!.Value, 1);
        Assert.Equal(1.2, v.Facts.ExitToReturnMs!.Value, 1);
        Assert.Contains("SetFocus blocked 20004 ms", v.Detail);
    }

    [Fact]
    public void NoCallLongerThanTheCleanLimitIsClean()
    {
        var v = HangJudge.Judge(Spec, Output(ret: 5.3, exit: null, workerFocus: "0x0"));
        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Contains("longest: SetFocus 1.8 ms", v.Detail);
    }

    [Theory]
    [InlineData(3.5, 5010.0, 5009.0, "0x2005a", "not within 25 % of the expected 20000 ms")]       // the 5 s timeout, judged against 20 s
    [InlineData(3.5, 20007.1, 12000.0, "0x2005a", "returned 8007 ms after the worker exited")]     // something else released it
    [InlineData(3.5, 20007.1, 20300.0, "0x2005a", "returned -293 ms after the worker exited")]     // it returned before the exit
    [InlineData(3.5, 20007.1, 20005.9, "0x0", "no evidence")]                                     // no attachment seen
    [InlineData(3.5, 1000.0, 999.0, "0x2005a", "blocked less than 3 s")]
    public void AHangMissingOneFactIsAWrongFailureThatNamesIt(double call, double ret, double exit, string workerFocus, string why)
    {
        var v = HangJudge.Judge(Spec, Output(call, ret, exit, workerFocus: workerFocus));
        Assert.Equal(Outcome.WrongFailure, v.Outcome);
        Assert.Contains(why, v.Detail);
    }

    [Fact]
    public void AReturnPrintedJustBeforeTheExitStampStillCounts() =>
        Assert.Equal(Outcome.Reproduced, HangJudge.Judge(Spec, Output(ret: 20005.0, exit: 20005.9 + HangJudge.PrintOrderSlackMs - 10)).Outcome);

    [Fact]
    public void WithoutAWorkerExitThereIsNoRelease() =>
        Assert.Contains("no worker-exit marker", HangJudge.Judge(Spec, Output(exit: null)).Detail);

    [Fact]
    public void ACallThatNeverReturnedIsAWrongFailure()
    {
        var v = HangJudge.Judge(Spec, "REPRO-REACHED ui-call t_ms=3.0 call=SetFocus\n");
        Assert.Equal(Outcome.WrongFailure, v.Outcome);
        Assert.Contains("never returned", v.Detail);
    }

    [Fact]
    public void AProgramWithoutTheProtocolIsAnError() =>
        Assert.Equal(Outcome.Error, HangJudge.Judge(Spec, "REPRO-REACHED ui-call t_ms=3.0 call=ShowWindow\nREPRO-DONE\n").Outcome);

    [Fact]
    public void OnlyTheNamedCallsAreJudgedAndTheLongestDecides()
    {
        var output = "REPRO-REACHED ui-call t_ms=0 call=ShowWindow\nREPRO-REACHED ui-return t_ms=9000 call=ShowWindow\n"
                     + "REPRO-REACHED ui-call t_ms=9000 call=SetFocus\nREPRO-REACHED ui-return t_ms=9001 call=SetFocus\n"
                     + "REPRO-REACHED ui-call t_ms=9001 call=SetFocus\nREPRO-REACHED ui-return t_ms=9050 call=SetFocus\n";
        var (calls, exit) = HangJudge.Parse(output);
        Assert.Equal(3, calls.Count);
        Assert.Null(exit);
        var v = HangJudge.Judge(Spec, output);
        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Equal(49.0, v.Facts.BlockMs!.Value, 1);
    }

    [Fact]
    public void TheHarnessClockGivesItsOwnBlockTime()
    {
        var markers = new Dictionary<string, double>
        {
            ["REPRO-REACHED ui-call t_ms=3.5 call=SetFocus"] = 0.70,
            ["REPRO-REACHED ui-return t_ms=20007.1 call=SetFocus"] = 20.72,
        };
        Assert.Equal(20020, HangJudge.HarnessBlockMs(markers));
    }

    [Fact]
    public void TheFamilyTakesHangSignaturesAndMayRunAlongsideOthers()
    {
        var family = SignatureFamilies.Default.For(Signature.Of("hang", Spec));
        Assert.IsType<HangFamily>(family);
        Assert.True(family.HoldsStill);
        Assert.Equal(Runner.CellLane.Alongside, family.Lane);
        Assert.IsType<ProcessFamily>(SignatureFamilies.Default.For(Signature.Of("process", ProcessPattern.DefaultClean)));
    }

    [Fact]
    public void ACaseThatAsksForADisplayGetsOneUnderWine()
    {
        var env = new Dictionary<string, string> { [WineIsolation.CellVariable] = "/tmp/cell", [WineIsolation.RootVariable] = "/corpus" };
        var s = new Subject("wine", new WineKind(), "/usr/bin/wine", "wine-8.0", null);
        Assert.Equal("1", new WineKind().Launch(s, "p.exe", [], new LaunchOptions(env, false, Display: true)).Args[3]);
        Assert.Equal("0", new WineKind().Launch(s, "p.exe", [], new LaunchOptions(env, false)).Args[3]);
        Assert.True(SubjectKinds.Default.Capabilities("wine-net8").HasFlag(SubjectCapabilities.Display));
        Assert.False(SubjectKinds.Default.Capabilities("net8").HasFlag(SubjectCapabilities.Display));
    }
}

/// <summary>Frames of Wine's DLLs that winedbg leaves unnamed get the export they fall in, read from the real DLL.</summary>
public class PeExportsTests
{
    private static string Win32u()
    {
        var dir = WineDbgSnapshot.WineDllDirectory("/usr/bin/winedbg");
        Assert.True(dir is not null, "Wine's PE DLLs are not installed (ci/setup.sh installs wine)");
        return Path.Combine(dir!, "win32u.dll");
    }

    [Fact]
    public void TheUiThreadsFrameIsNtUserSetFocus()
    {
        var win32u = PeExports.Read(Win32u());
        Assert.True(win32u.Count > 1000, $"{win32u.Count} exports");
        // winedbg printed "in win32u (+0xbdc4)" for the hung UI thread: the return address after the syscall.
        Assert.Equal("win32u!NtUserSetFocus+0x14", WineDbgSnapshot.NameFrame("win32u+0xbdc4", _ => win32u));
    }

    [Fact]
    public void NamedFramesAndUnknownModulesStayAsTheyAre()
    {
        var win32u = PeExports.Read(Win32u());
        Assert.Equal("kernelbase!Sleep+0x24", WineDbgSnapshot.NameFrame("kernelbase!Sleep+0x24", _ => win32u));
        Assert.Equal("coreclr+0x10a42f", WineDbgSnapshot.NameFrame("coreclr+0x10a42f", _ => null));
    }

    [Fact]
    public void AFileThatIsNotAPeImageHasNoExports()
    {
        var f = Path.GetTempFileName();
        try
        {
            File.WriteAllText(f, "not a PE file at all, just text that is long enough to have a header's worth of bytes");
            Assert.Equal(0, PeExports.Read(f).Count);
        }
        finally { File.Delete(f); }
    }
}

/// <summary>winedbg attaches to a .NET process under Wine only when the case holds still (a hang).</summary>
public class WineDotnetCaptureTests
{
    [Fact]
    public void OnlyAHangGetsWinedbgOnDotnet()
    {
        var s = new Subject("wine-net10", new WineDotnetKind(), "/usr/bin/wine", "wine-8.0", null);
        var tools = ToolRunner.Instance;
        Assert.IsType<WineDbgSnapshot>(new WineDotnetKind().SnapshotBackend(s, new CaptureContext(tools, "/", false, HoldsStill: true)));
        var other = new WineDotnetKind().SnapshotBackend(s, new CaptureContext(tools, "/", false));
        Assert.Contains("holds the program's exit", other.Unavailable);
        // Win32 programs under Wine: a minidump takes 0.2-4 s, so every case gets it.
        Assert.IsType<WineDbgSnapshot>(new WineKind().SnapshotBackend(s with { Kind = new WineKind() }, new CaptureContext(tools, "/", false)));
    }
}

/// <summary>A snapshot that is still attached when the worker exits holds the exit: the hang's length is then the capture's.</summary>

/// <summary>How the hang family runs a cell: measured without a debugger, captured in a run of its own, judged by the knob.</summary>
public class HangRunTests
{
    private const string Knob = "DOTNET_ThreadPool_ThreadTimeoutMs";

    /// <summary>Every run prints a hang of the given length, released by the worker's exit; the runs are recorded.</summary>
    private sealed class HangRuns(CaseSpec cs, double blockMs, IReadOnlyDictionary<string, string> env) : FakeRunLauncher(cs)
    {
        public List<(string Label, TimedCapture? Timed, bool UntilCaptured)> Runs { get; } = [];
        public override IReadOnlyDictionary<string, string> Env => env;

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            Runs.Add((label, timed, untilCaptured));
            var stdout = $"REPRO-REACHED ui-call t_ms=3.0 call=SetFocus\nREPRO-REACHED worker-exit t_ms={3 + blockMs}\n"
                         + $"REPRO-REACHED ui-return t_ms={3 + blockMs + 1} call=SetFocus\nREPRO-DONE\n";
            return Exited(new Containment.RunResult(0, null, false, false, blockMs / 1000 + 1, 1 << 20, stdout, "", "", "", "", []));
        }
    }

    private static readonly TimedCapture Timed = new("REPRO-REACHED ui-call", 1, 1, 1, false);

    private static CaseSpec Case(IReadOnlyDictionary<string, string> env) =>
        new("csharp", "", [], [], new Budget(60, 1024),
            Signature.Of("hang", new HangSpec("SetFocus", 3, 20000, 0.25, 1, 200, [], Knob)), env, [], [])
        { Captures = new Capture.CaptureSpecs(new Dictionary<string, object> { ["timed"] = Timed }) };

    private static async Task<(Verdict, HangRuns)> Run(double blockMs, Dictionary<string, string>? caseEnv = null, Dictionary<string, string>? runEnv = null)
    {
        var runs = new HangRuns(Case(caseEnv ?? []), blockMs, runEnv ?? caseEnv ?? []);
        var cell = new CellResult { Key = new CellKey("r", "csharp", "bug", "wine-net10"), Rerun = "" };
        return (await new HangFamily().RunAsync(runs, cell), runs);
    }

    [Fact]
    public async Task TheHangIsMeasuredWithoutADebuggerAndCapturedInARunOfItsOwn()
    {
        var (v, runs) = await Run(20002);
        Assert.Equal(Outcome.Reproduced, v.Outcome);
        Assert.Equal([("run", null, false), ("capture", Timed, true)], runs.Runs);
    }

    [Fact]
    public async Task ACleanCellTakesNoCaptureRun()
    {
        var (v, runs) = await Run(1);
        Assert.Equal(Outcome.Clean, v.Outcome);
        Assert.Equal(["run"], runs.Runs.Select(r => r.Label));
    }

    [Fact]
    public async Task TheExpectedLengthFollowsTheKnob()
    {
        var (v, _) = await Run(8005, runEnv: new() { [Knob] = "8000" });
        Assert.Equal(Outcome.Reproduced, v.Outcome);
        Assert.Equal(8000, ((HangFacts)v.Facts!).ExpectedMs);
    }

    [Fact]
    public async Task AHangOfTheWrongLengthIsNeverReproduced()
    {
        // The pool's timeout set to 8 s, the case expecting its default 20 s: the length is judged, never waived.
        var (v, _) = await Run(8005, caseEnv: new(), runEnv: new() { ["OTHER"] = "1" });
        Assert.Equal(Outcome.WrongFailure, v.Outcome);
        Assert.Contains("outside the hang's window [15000, 25000] ms", v.Detail);
    }

    [Fact]
    public async Task AKnobThatIsNoNumberIsAnError()
    {
        var (v, runs) = await Run(8005, runEnv: new() { [Knob] = "soon" });
        Assert.Equal(Outcome.Error, v.Outcome);
        Assert.Contains("not a positive number", v.Detail);
        Assert.Empty(runs.Runs);
    }
}

/// <summary>
/// Issue 35: a hang's length decides only when its interval is inside one region. One run spans the program's stamps
/// and the harness's clock of the same lines; while that straddles an edge of the window, more runs, their mean's interval.
/// </summary>
public class HangDecisionTests
{
    /// <summary>Runs whose blocks (program stamps) and harness clocks (ms between the lines' arrival) are given in turn.</summary>
    private sealed class Blocks(CaseSpec cs, params (double Program, double Harness)[] runs) : FakeRunLauncher(cs)
    {
        public readonly List<string> Labels = [];

        protected override RunOutput Run(long? n, string label, TimedCapture? timed, bool untilCaptured)
        {
            var (block, harness) = runs[Math.Min(Labels.Count, runs.Length - 1)];
            Labels.Add(label);
            var call = "REPRO-REACHED ui-call t_ms=3.0 call=SetFocus";
            var ret = $"REPRO-REACHED ui-return t_ms={3 + block} call=SetFocus";
            var stdout = $"{call}\nREPRO-REACHED worker-exit t_ms={3 + block - 1}\n{ret}\nREPRO-DONE\n";
            return new RunOutput(new Containment.RunResult(0, null, false, false, block / 1000 + 1, 1 << 20, stdout, "", "", "", "", []),
                                 ProgramMetrics.None, new Dictionary<string, double> { [call] = 0.5, [ret] = 0.5 + harness / 1000 });
        }
    }

    private static async Task<(Verdict, List<string>)> Run(params (double, double)[] runs)
    {
        var cs = new CaseSpec("cpp", "", [], [], new Budget(60, 1024), Signature.Of("hang", new HangSpec("SetFocus", 3, 18000, 0.25, 1, 200, [])),
                              new Dictionary<string, string>(), [], []);
        var launcher = new Blocks(cs, runs);
        var verdict = await new HangFamily().RunAsync(launcher, new CellResult { Key = new CellKey("r", "cpp", "bug", "wine"), Rerun = "" });
        return (verdict, launcher.Labels);
    }

    [Fact]
    public void TheWindowIsTheExpectedLengthWithinItsToleranceAndAtLeastMinSec()
    {
        Assert.Equal((13500, 22500), new HangSpec("SetFocus", 3, 18000, 0.25, 1, 200, []).Window);
        Assert.Equal(Placement.Reproduced, HangJudge.Place(new HangSpec("SetFocus", 3, 18000, 0.25, 1, 200, []), new Interval(18000, 17990, 18010)));
        Assert.Equal(Placement.Between, HangJudge.Place(new HangSpec("SetFocus", 3, 18000, 0.25, 1, 200, []), new Interval(9000, 8990, 9010)));
        Assert.Equal(Placement.Undecided, HangJudge.Place(new HangSpec("SetFocus", 3, 18000, 0.25, 1, 200, []), new Interval(13500, 13450, 13520)));
    }

    [Fact]
    public async Task ABlockFarFromEveryEdgeDecidesOnOneRun()
    {
        var (v, labels) = await Run((18004, 18020));
        Assert.Equal(Outcome.Reproduced, v.Outcome);
        Assert.Equal(["run"], labels);
        Assert.Equal("18004 [18004, 18020]", ((HangFacts)v.Facts!).Decision!.Interval);
    }

    [Fact]
    public async Task ABlockAcrossAnEdgeRunsAgainUntilItsMeanDecides()
    {
        // The program stamped 13,520 ms; the harness saw the lines 13,460 ms apart, across the window's 13,500.
        var (v, labels) = await Run((13520, 13460), (13530, 13530), (13525, 13525));
        Assert.Equal(Outcome.Reproduced, v.Outcome);
        Assert.Equal(["run", "run2", "run3"], labels);
        var d = ((HangFacts)v.Facts!).Decision!;
        Assert.Equal((3, "reproduced"), (d.Rounds, d.Placement));
        Assert.Contains("3 runs: 13520, 13530, 13525 ms", v.Detail);
    }

    /// <summary>A planted block on the window's edge ends inconclusive after its runs: never reproduced, clean or a wrong-failure.</summary>
    [Fact]
    public async Task ABlockOnTheWindowsEdgeIsInconclusive()
    {
        var (v, labels) = await Run((13480, 13530), (13520, 13470), (13490, 13540));
        Assert.Equal(Outcome.Inconclusive, v.Outcome);
        Assert.Equal(3, labels.Count);
        Assert.Contains("block ms 13497 [", v.Detail);
        Assert.Contains("straddles a bound (the bug in [13500, 22500], clean ≤ 200) after 3 of at most 3 rounds", v.Detail);
    }
}

/// <summary>winedbg is run through the subject's loader, however the user's Wine was given.</summary>
public class WineDbgLoaderTests
{
    [Theory]
    [InlineData("/usr/bin/wine")]            // Debian's loader script
    [InlineData("/usr/lib/wine/wine64")]     // the binary the script runs
    public void EveryFormOfDebiansWineFindsItsDlls(string wine)
    {
        Assert.Null(new WineDbgSnapshot(wine).Unavailable);
        Assert.True(File.Exists(Path.Combine(WineDbgSnapshot.WineDllDirectory(wine)!, "win32u.dll")), wine);
    }

    [Fact]
    public void ABuildTreesLoaderNeedsNoWinedbgBesideIt()
    {
        // A build tree has `wine` (loader/wine) and no winedbg script: the loader runs winedbg itself.
        var tree = Directory.CreateTempSubdirectory("corpus-winetree-").FullName;
        try
        {
            var wine = Path.Combine(tree, "wine");
            File.WriteAllText(wine, "#!/bin/sh\n");
            Assert.Null(new WineDbgSnapshot(wine).Unavailable);
            Assert.Contains("no Wine loader", new WineDbgSnapshot(Path.Combine(tree, "gone")).Unavailable);
        }
        finally { Directory.Delete(tree, true); }
    }
}
