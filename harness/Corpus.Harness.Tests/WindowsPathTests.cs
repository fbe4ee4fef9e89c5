using Corpus.Harness.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// The parts of the Windows path that are plain logic or that run a tool, checked on Linux. procdump.exe and TTD.exe
/// cannot exist here: a shell script stands in for procdump.exe (it records its arguments and writes a dump), so
/// lookup, launch, exit handling and the capture record are real. The Job Object path itself runs under Wine in
/// make unit (corpus selftest and corpus winsmoke), since xUnit cannot host it here.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public class WindowsPathTests
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

    [Theory]
    [InlineData("plain", "plain")]
    [InlineData("", "\"\"")]
    [InlineData("two words", "\"two words\"")]
    [InlineData("C:\\Program Files\\x\\", "\"C:\\Program Files\\x\\\\\"")]   // a trailing backslash before the closing quote doubles
    [InlineData("say \"hi\"", "\"say \\\"hi\\\"\"")]
    [InlineData("a\\\\\"b", "\"a\\\\\\\\\\\"b\"")]                               // backslashes before a quote double, plus one
    [InlineData("C:\\dir\\file", "C:\\dir\\file")]                               // backslashes elsewhere stay literal
    public void CommandLineQuotingFollowsTheCRuntimeRules(string arg, string quoted) =>
        Assert.Equal(quoted, WindowsCommandLine.Quote(arg));

    [Fact]
    public void CommandLineQuotesTheProgramAndEachArgument() =>
        Assert.Equal("\"C:\\a b\\p.exe\" bug 8 \"x y\"", WindowsCommandLine.Build("C:\\a b\\p.exe", ["bug", "8", "x y"]));

    [Theory]
    [InlineData(0u, 0, null)]
    [InlineData(7u, 7, null)]
    [InlineData(0xC0000005u, null, "SIGSEGV")]
    [InlineData(0xC00000FDu, null, "SIGSEGV")]
    [InlineData(0xC0000409u, null, "SIGABRT")]
    [InlineData(0xC0000602u, null, "SIGABRT")]
    [InlineData(0xE0434352u, unchecked((int)0xE0434352u), null)]   // a .NET exception's code stays an exit code
    public void WindowsExitCodesReadLikeSignals(uint raw, int? code, string? signal) =>
        Assert.Equal((code, signal), WindowsExit.Describe(raw));

    [Fact]
    public void ConfiguredPathWinsOverPathAndMustExist()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-tools-").FullName;
        try
        {
            var onPath = Path.Combine(dir, "procdump.exe");
            File.WriteAllText(onPath, "");
            Assert.Equal((onPath, null), WindowsTools.Locate("procdump.exe", "CORPUS_PROCDUMP", "x", true, configured: "", searchPath: dir));
            var other = Path.Combine(dir, "procdump64.exe");
            File.WriteAllText(other, "");
            Assert.Equal((other, null), WindowsTools.Locate("procdump.exe", "CORPUS_PROCDUMP", "x", true, configured: other, searchPath: dir));
            Assert.Equal((null, $"CORPUS_PROCDUMP={dir}/none.exe: no such file"),
                         WindowsTools.Locate("procdump.exe", "CORPUS_PROCDUMP", "x", true, configured: Path.Combine(dir, "none.exe"), searchPath: dir));
        }
        finally { Directory.Delete(dir, true); }
    }

    /// <summary>A stand-in procdump.exe: records its arguments, writes a dump where asked, exits like procdump (1 dump).</summary>
    private static string FakeProcDump(string dir, bool writeDump = true)
    {
        var exe = Path.Combine(dir, "procdump.exe");
        File.WriteAllText(exe, "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\n"
                               + (writeDump ? "last=$(eval echo \\${$#})\ncase $last in *.dmp) f=$last ;; *) f=$last/target_221122_073000.dmp ;; esac\n"
                                              + "printf MDMPxx > \"$f\"\n" : "")
                               + "exit 1\n");
        File.SetUnixFileMode(exe, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return exe;
    }

    private static ContainedProcess Sleeper(string dir) =>
        new(new ProcessSpec("/bin/sleep", ["30"], dir, Path.Combine(dir, "o"), Path.Combine(dir, "e"), TimeSpan.FromSeconds(30), 64 << 20));

    [Fact]
    public async Task ProcDumpRunsAndItsDumpIsRecorded()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-pdexe-").FullName;
        try
        {
            FakeProcDump(dir);
            using var target = Sleeper(dir);
            var backend = new WindowsProcDump(ToolRunner.Instance, isWindows: true, searchPath: dir) { ReadStacks = false };
            var snapshot = await backend.SnapshotAsync(target, dir, 2, CancellationToken.None);
            Assert.Equal($"-accepteula -ma {target.Pid} {dir}/snapshot-2.dmp", File.ReadAllText(Path.Combine(dir, "args")).Trim());
            Assert.Equal((Path.Combine(dir, "snapshot-2.dmp"), 6L), (snapshot.File, snapshot.Bytes));
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public async Task ProcDumpThatWritesNoDumpIsAnError()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-pdexe-").FullName;
        try
        {
            FakeProcDump(dir, writeDump: false);
            using var target = Sleeper(dir);
            var backend = new WindowsProcDump(ToolRunner.Instance, isWindows: true, searchPath: dir) { ReadStacks = false };
            var e = await Assert.ThrowsAsync<InvalidOperationException>(() => backend.SnapshotAsync(target, dir, 0, CancellationToken.None));
            Assert.StartsWith("procdump.exe wrote no dump", e.Message);
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public void CrashAndTraceCapturesWrapTheLaunch()
    {
        var dir = Directory.CreateTempSubdirectory("corpus-wrap-").FullName;
        try
        {
            var pd = FakeProcDump(dir);
            var ttd = Path.Combine(dir, "TTD.exe");
            File.WriteAllText(ttd, "");
            var launch = new Launch("C:\\b\\app.exe", ["bug", "8"], new Dictionary<string, string> { ["X"] = "1" });
            var crash = new WindowsProcDump(ToolRunner.Instance, isWindows: true, searchPath: dir).WrapCrash(launch, "C:\\run");
            Assert.Equal((pd, "-accepteula -ma -e -x C:\\run C:\\b\\app.exe bug 8", "1"), (crash.File, string.Join(' ', crash.Args), crash.Env["X"]));
            var ring = new WindowsTtd(isWindows: true, searchPath: dir).Wrap(launch, "C:\\t", WindowsTtd.ParseMode("ring:256"));
            Assert.Equal((ttd, "-accepteula -ring -maxFile 256 -out C:\\t -launch C:\\b\\app.exe bug 8"), (ring.File, string.Join(' ', ring.Args)));
            Assert.Null(WindowsTtd.ParseMode("full"));
            Assert.Equal("CORPUS_TTD_TRACE=ring:0: use full or ring:MB (a positive number of megabytes)",
                         Assert.Throws<ArgumentException>(() => WindowsTtd.ParseMode("ring:0")).Message);
        }
        finally { Directory.Delete(dir, true); }
    }

    [Fact]
    public void TheWindowsSubjectBuildsItsOwnFlavorWithTheReleaseProgramAtTheTop()
    {
        var m = Manifest.Load(Path.Combine(RepoRoot, "repros", "filemapping-leak", "repro.json"));
        var cs = m.Cases.Single(c => c.Id == "win32");
        var kind = new NativeKind();
        var recipe = Assert.IsType<CmakeBuild>(kind.Recipe(new Subject("windows", kind, "C:\\", null, null), m, cs));
        Assert.Equal((NativeKind.WindowsFlavor, "filemapping_leak_win32.exe"), (recipe.Flavor, Path.GetFileName(recipe.ProgramPath(m, "/b"))));
        Assert.Equal("cmake", kind.Recipe(new Subject("linux", kind, "/", null, null), m, cs).Flavor);
    }

    [Fact]
    public void WinsmokeCrossBuildsTheWindowsFlavorThroughTheKind()
    {
        var m = Manifest.Load(Path.Combine(RepoRoot, "repros", "filemapping-leak", "repro.json"));
        var cs = m.Cases.Single(c => c.Id == "win32");
        var windows = SubjectKinds.Default.Resolve("windows", RepoRoot);
        var cross = Assert.IsType<CmakeBuild>(windows.Kind.CrossBuild(windows, m, cs));
        // The same flavor and program as on Windows, so a Windows harness finds the cross build up to date.
        var native = windows.Kind.Recipe(windows, m, cs);
        Assert.Equal((native.Flavor, native.ProgramPath(m, "/b")), (cross.Flavor, cross.ProgramPath(m, "/b")));
        var linux = SubjectKinds.Default.Resolve("linux", RepoRoot);
        Assert.Null(linux.Kind.CrossBuild(linux, m, m.Cases.Single(c => c.Id == "cpp-memfd")));
    }

    [Fact]
    public void SmokeExpectationsNameTheirBadField()
    {
        var root = Directory.CreateTempSubdirectory("corpus-smoke-").FullName;
        try
        {
            Directory.CreateDirectory(Path.Combine(root, "harness", "wine"));
            File.WriteAllText(Path.Combine(root, WindowsSmoke.ExpectationsFile),
                              "// c\n{ \"cells\": [ { \"repro\": \"r\", \"case\": \"c\", \"variant\": \"bug\", \"outcome\": \"clean\", \"reason\": \"x\",\n"
                              + "\"windowsOutcome\": \"passed\", \"windowsReason\": \"x\" } ] }");
            Assert.Equal("harness/wine/windows-harness.json: field 'cells[0].windowsOutcome': 'passed' is not an outcome",
                         Assert.Throws<InputException>(() => WindowsSmoke.LoadExpectations(root)).Message);
            var real = WindowsSmoke.LoadExpectations(RepoRoot);
            Assert.Contains(real, e => e is { Repro: "filemapping-leak", Case: "win32", Variant: "bug" });
        }
        finally { Directory.Delete(root, true); }
    }

    [Fact]
    public void WinePathsAreOnDriveZ() => Assert.Equal("Z:\\work\\corpus", WindowsSmoke.WinePath("/work/corpus"));

    /// <summary>Pester 5.7.1's JUnit XML, cut from a run under Wine with three outcomes.</summary>
    [Fact]
    public void PesterTallyCountsItsFromJUnit()
    {
        var file = Path.Combine(Path.GetTempPath(), $"pester-{Guid.NewGuid():n}.xml");
        File.WriteAllText(file, """
            <?xml version="1.0" encoding="utf-8" standalone="no"?>
            <testsuites name="Pester" tests="3" errors="0" failures="1" disabled="1" time="4.657">
              <testsuite name="a.Tests.ps1" tests="3" errors="0" failures="1" skipped="1" disabled="0">
                <testcase name="a.linux.x" status="Skipped" classname="a.Tests.ps1" assertions="0" time="0"><skipped message=""></skipped></testcase>
                <testcase name="a.win32.y" status="Passed" classname="a.Tests.ps1" assertions="0" time="0.2" />
                <testcase name="a.win32.z" status="Failed" classname="a.Tests.ps1" assertions="0" time="0.1">
                  <failure message="Expected 8, but got 3.&#xA;Detail: the memory belongs to no process">at line 1</failure>
                </testcase>
              </testsuite>
            </testsuites>
            """);
        try
        {
            var t = WindowsSmoke.PesterTally(file)!;
            Assert.Equal((1, 1, 1), (t.Passed, t.Failed, t.Skipped));
            Assert.Equal(["a.win32.z: Expected 8, but got 3."], t.Failures);
        }
        finally { File.Delete(file); }
        Assert.Null(WindowsSmoke.PesterTally(file));
    }

    [Fact]
    public void PlainTextDropsWhatThePtyAdded() =>
        Assert.Equal("planted: x\nTests Passed: 8,",
                     WindowsSmoke.PlainText("\u001b]0;Administrator: \u0007\u001b[?25lplanted: x\r\r\n\u001b[?25hTests Passed: 8,\u001b[K"));
}

/// <summary>cdb's `~*k` output, as cdb 10.0 prints it for a minidump (written by hand after its documented format).</summary>
public class CdbStacksTests
{
    private const string Output = """
        0:000> ~*k 50

        .  0  Id: 1a2c.1b3c Suspend: 0 Teb: 000000a1`2b5e6000 Unfrozen
         # Child-SP          RetAddr               Call Site
        00 000000a1`2b3fe8d8 00007ffa`1c2d3e4f     ntdll!NtDelayExecution+0x14
        01 000000a1`2b3fe8e0 00007ff6`5a6b1234     KERNELBASE!SleepEx+0x9e
        02 000000a1`2b3fe980 00007ff6`5a6b5678     filemapping_leak_win32!main+0x1f4 [C:\\r\\filemapping_leak_win32.cpp @ 88]
        03 000000a1`2b3fea10 00007ffa`1e4f7344     filemapping_leak_win32!__scrt_common_main_seh+0x10c

           1  Id: 1a2c.2d40 Suspend: 0 Teb: 000000a1`2b5e8000 Unfrozen
         # Child-SP          RetAddr               Call Site
        00 000000a1`2b7ff6a8 00007ffa`1f0a2dc7     ntdll!NtWaitForWorkViaWorkerFactory+0x14
        quit:
        """;

    [Fact]
    public void EveryThreadWithItsCallSites()
    {
        var threads = CdbStacks.Parse(Output);
        Assert.Equal(2, threads.Count);
        Assert.Equal("thread 0 (id 1a2c.1b3c)", threads[0].Thread);
        Assert.Equal(["ntdll!NtDelayExecution+0x14", "KERNELBASE!SleepEx+0x9e", "filemapping_leak_win32!main+0x1f4",
                      "filemapping_leak_win32!__scrt_common_main_seh+0x10c"], threads[0].Frames);
        Assert.Equal(["ntdll!NtWaitForWorkViaWorkerFactory+0x14"], threads[1].Frames);
    }

    [Fact]
    public void NoCdbMeansNoStacksAndSaysWhy()
    {
        var (path, why) = CdbStacks.Locate(isWindows: true, configured: "", searchPath: Path.GetTempPath());
        // The SDK's folder does not exist on Linux, so the lookup ends with the reason.
        Assert.Null(path);
        Assert.StartsWith("cdb.exe is not on PATH and CORPUS_CDB is not set", why);
    }
}
