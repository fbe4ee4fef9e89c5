using Corpus.Harness.Containment;

namespace Corpus.Harness.Tests;

/// <summary>Real processes: the caps must hold and nothing may outlive a run.</summary>
public sealed class ContainmentTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("corpus-contain-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private ProcessSpec Spec(string script, double timeoutSec = 20, long memoryMB = 256) =>
        new("/bin/sh", ["-c", script], _dir, Path.Combine(_dir, "out"), Path.Combine(_dir, "err"),
            TimeSpan.FromSeconds(timeoutSec), memoryMB << 20);

    /// <summary>A sleep length (300.xxxxxxx s) that names this run's processes and no one else's.</summary>
    private static string Unique() => $"300.{Environment.ProcessId % 1000:D3}{Random.Shared.Next(1000000):D6}";

    private static bool AnyProcessWithArg(string marker) =>
        Directory.EnumerateDirectories("/proc").Where(d => int.TryParse(Path.GetFileName(d), out _)).Any(d =>
        {
            try { return File.ReadAllText(Path.Combine(d, "cmdline")).Contains(marker); }
            catch (IOException) { return false; }
            catch (UnauthorizedAccessException) { return false; }
        });

    [Fact]
    public async Task ExitCodeAndOutputAreCaptured()
    {
        using var p = new ContainedProcess(Spec("echo hello; echo oops >&2; exit 3"));
        var r = await p.WaitAsync();
        Assert.Equal(3, r.ExitCode);
        Assert.Null(r.Signal);
        Assert.Equal("hello\n", r.Stdout);
        Assert.Equal("oops\n", File.ReadAllText(r.StderrFile));
    }

    [Fact]
    public async Task DeathBySignalIsNamed()
    {
        using var p = new ContainedProcess(Spec("kill -ABRT $$"));
        var r = await p.WaitAsync();
        Assert.Equal("SIGABRT", r.Signal);
        Assert.Equal("SIGABRT", r.Status);
    }

    [Fact]
    public async Task TimeoutKillsTheWholeTree()
    {
        // A background grandchild that would otherwise outlive its parent.
        // Arguments unique to this test run: another run of the suite on the host must not count.
        var child = Unique();
        using var p = new ContainedProcess(Spec($"sleep {child} & sleep {Unique()}", timeoutSec: 1));
        var r = await p.WaitAsync();
        Assert.True(r.TimedOut);
        Assert.Equal("timeout", r.Status);
        Assert.InRange(r.WallSeconds, 0.9, 10);
        Assert.False(AnyProcessWithArg(child), "the background child survived the kill");
    }

    private ProcessSpec OnCpuClock(string script, double cpuSec, double wallCapSec) =>
        Spec(script, timeoutSec: wallCapSec) with { CpuTimeout = TimeSpan.FromSeconds(cpuSec) };

    [Fact]
    public async Task ACpuBudgetEndsARunOnceItsProcessesSpentIt()
    {
        // Two busy children, one of which ends early: its CPU still counts (a cgroup keeps what ended members used).
        var marker = Unique();
        using var p = new ContainedProcess(OnCpuClock(
            $"timeout 0.5 sh -c 'while :; do :; done'; sh -c 'while :; do :; done' {marker}", cpuSec: 1.5, wallCapSec: 60));
        var r = await p.WaitAsync();
        Assert.True(r.TimedOut, $"status {r.Status}, {r.CpuSeconds} s of CPU, {r.Containment}");
        Assert.False(r.Starved);
        Assert.InRange(r.CpuSeconds!.Value, 1.5, 3);
        Assert.InRange(r.ClockSeconds, 1.5, 3);
        Assert.Contains("the budget 1.5 s of CPU", r.Containment);
        // Where the host has a cgroup to count in, the kernel's count is used, not the /proc estimate.
        var probe = CpuacctCgroup.TryCreate("probe-" + marker);
        probe?.Dispose();
        if (probe is not null || MemoryCgroup.Locate() is { Parent: not null, V2: true })
            Assert.DoesNotContain("in /proc", r.Containment);
        Assert.False(AnyProcessWithArg(marker), "the busy child survived the kill");
    }

    [Fact]
    public async Task ARunThatGetsNoCpuIsStarvedAtItsWallCapNotTimedOut()
    {
        var child = Unique();
        using var p = new ContainedProcess(OnCpuClock($"sleep {child}", cpuSec: 5, wallCapSec: 1));
        var r = await p.WaitAsync();
        Assert.True(r.Starved, $"status {r.Status}");
        Assert.False(r.TimedOut);
        Assert.Equal("starved", r.Status);
        Assert.InRange(r.CpuSeconds!.Value, 0, 0.5);
        Assert.InRange(r.WallSeconds, 0.9, 10);
        Assert.False(AnyProcessWithArg(child), "the sleeping child survived the kill");
    }

    [Fact]
    public async Task MemoryCapEndsTheRunAsAnOutcome()
    {
        // dd reads 600 MB of zeros into one buffer, touching every page.
        using var p = new ContainedProcess(Spec("dd if=/dev/zero of=/dev/null bs=600M count=1", memoryMB: 100));
        var r = await p.WaitAsync();
        Assert.True(r.MemoryCapped, $"status {r.Status}, peak {r.PeakBytes >> 20} MB, {r.Containment}");
        Assert.True(r.PeakBytes < 140L << 20, $"peak {r.PeakBytes >> 20} MB went past the cap");
    }

    [Fact]
    public async Task MemoryIsSampled()
    {
        using var p = new ContainedProcess(Spec("sleep 0.5"));
        var r = await p.WaitAsync();
        Assert.NotEmpty(r.Memory);
        Assert.Equal(0, r.ExitCode);
    }

    [Fact]
    public async Task LinesArriveWhileTheProcessRuns()
    {
        using var p = new ContainedProcess(Spec("echo READY; sleep 30"));
        var ready = new TaskCompletionSource<double>();
        p.Line += (line, _, t) => { if (line == "READY") ready.TrySetResult(t); };
        var t = await ready.Task.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.False(p.HasExited);
        p.KillTree();
        var r = await p.WaitAsync();
        Assert.Equal("SIGKILL", r.Signal);
        Assert.InRange(t, 0, 5);
    }

    /// <summary>A ledger of a dead harness (pid 999999999 cannot exist) in this test's ledger folder.</summary>
    private string DeadLedger(params string[] entries)
    {
        var ledger = Path.Combine(_dir, "harness-999999999-1.ledger");
        File.WriteAllLines(ledger, entries);
        return ledger;
    }

    private static (MemoryCgroup Cg, System.Diagnostics.Process Sleeper) CgroupWithSleeper(string name, string marker)
    {
        var cg = MemoryCgroup.TryCreate(name, 64 << 20, out _)!;
        var sleeper = System.Diagnostics.Process.Start("/bin/sh", ["-c", $"echo $$ > {cg.Dir}/cgroup.procs; exec sleep {marker}"]);
        var until = DateTime.UtcNow.AddSeconds(5);
        while (cg.Members().Count == 0 && DateTime.UtcNow < until) Thread.Sleep(20);
        Assert.NotEmpty(cg.Members());
        return (cg, sleeper);
    }

    [Fact]
    public void ACgroupOnADeadHarnesssLedgerIsKilledAndRemoved()
    {
        // Without memory cgroups the RSS watchdog contains runs; MemoryCapEndsTheRunAsAnOutcome covers it.
        if (MemoryCgroup.Locate().Parent is null) return;
        var (cg, sleeper) = CgroupWithSleeper("999999999-1-1", "300.125");
        using var _ = sleeper;
        var ledger = DeadLedger($"cg {cg.Dir}");
        var left = Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
        Assert.Equal(1, left.Cgroups);
        Assert.Equal(1, left.Processes);
        Assert.Equal(1, left.Ledgers);
        Assert.Contains("1 cgroup(s) (1 process(es) killed), 1 ledger(s)", left.ToString());
        Assert.False(Directory.Exists(cg.Dir));
        Assert.False(File.Exists(ledger));
        Assert.True(sleeper.WaitForExit(5000));
    }

    [Fact]
    public void ACpuacctGroupOnADeadHarnesssLedgerIsKilledAndRemovedToo()
    {
        // A v1 host's CPU-clock run has a second group, in the cpuacct hierarchy; v2 counts CPU in the memory group.
        if (CpuacctCgroup.TryCreate("999999999-1-2") is not { } cg) return;
        var sleeper = System.Diagnostics.Process.Start("/bin/sh", ["-c", $"echo $$ > {cg.Dir}/cgroup.procs; exec sleep 300.127"])!;
        using var _ = sleeper;
        var until = DateTime.UtcNow.AddSeconds(5);
        while (MemoryCgroup.Open(cg.Dir).Members().Count == 0 && DateTime.UtcNow < until) Thread.Sleep(20);
        DeadLedger($"cg {cg.Dir}");
        var left = Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
        Assert.Equal((1, 1), (left.Cgroups, left.Processes));
        Assert.False(Directory.Exists(cg.Dir));
        Assert.True(sleeper.WaitForExit(5000));
    }

    [Fact]
    public void CgroupsThatNoLedgerOfThisCheckoutNamesAreNotOurs()
    {
        if (MemoryCgroup.Locate().Parent is null) return;
        // A dead harness of another checkout, and one whose ledger names a cgroup of a different owner.
        var (other, s1) = CgroupWithSleeper("999999998-5-1", "300.127");
        var (foreign, s2) = CgroupWithSleeper("999999997-5-1", "300.128");
        using var _1 = s1;
        using var _2 = s2;
        try
        {
            DeadLedger($"cg {foreign.Dir}");
            var left = Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
            Assert.Equal(0, left.Cgroups);
            Assert.True(Directory.Exists(other.Dir));
            Assert.True(Directory.Exists(foreign.Dir));
            Assert.False(s1.HasExited);
            Assert.False(s2.HasExited);
        }
        finally
        {
            other.Dispose();
            foreign.Dispose();
        }
    }

    [Fact]
    public void TheLedgerOfALiveHarnessIsLeftAlone()
    {
        if (MemoryCgroup.Locate().Parent is null) return;
        // This test process stands for a live harness: same pid, same start time.
        var owner = Supervisor.Owner;
        var (cg, sleeper) = CgroupWithSleeper($"{owner}-999", "300.129");
        using var _ = sleeper;
        try
        {
            var ledger = Path.Combine(_dir, $"harness-{owner}.ledger");
            File.WriteAllLines(ledger, [$"cg {cg.Dir}"]);
            Assert.False(Leftovers.Clean(_dir, Capture.ToolRunner.Instance).Any);
            Assert.True(File.Exists(ledger));
            Assert.True(Directory.Exists(cg.Dir));
            // The same pid with another start time is a dead owner whose pid was reused.
            Assert.True(Leftovers.OwnerDead($"{Environment.ProcessId}-1"));
            Assert.False(Leftovers.OwnerDead(owner));
        }
        finally { cg.Dispose(); }
    }

    [Fact]
    public void OnlyPerfMapsOnRecordAreRemoved()
    {
        // pids above pid_max: dead for sure. The corpus made the first map (its ledger says so), not the second.
        var ours = "/tmp/perf-999999991.map";
        var oursInfo = "/tmp/perfinfo-999999991.map";
        var stranger = "/tmp/perf-999999992.map";
        File.WriteAllText(ours, "0 1 ours");
        File.WriteAllText(oursInfo, "ImageLoad;ours");
        File.WriteAllText(stranger, "0 1 a dead stranger's");
        try
        {
            DeadLedger("map 999999991");
            var left = Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
            Assert.Equal(1, left.PerfMaps);
            Assert.False(File.Exists(ours));
            Assert.False(File.Exists(oursInfo), "CoreCLR 8's perfinfo file of the run was left");
            Assert.True(File.Exists(stranger), "a perf map the corpus did not make was deleted");
        }
        finally
        {
            File.Delete(ours);
            File.Delete(oursInfo);
            File.Delete(stranger);
        }
    }

    [Fact]
    public void ACoreOfAnUnfinishedCrashRunIsRemoved()
    {
        var run = Directory.CreateDirectory(Path.Combine(_dir, "run0001")).FullName;
        File.WriteAllText(Path.Combine(run, "core"), "core");
        File.WriteAllText(Path.Combine(run, "core.123"), "core");
        File.WriteAllText(Path.Combine(run, "core-notes.txt"), "evidence");
        DeadLedger($"core {run}");
        Assert.Equal(2, Leftovers.Clean(_dir, Capture.ToolRunner.Instance).Cores);
        Assert.Equal(["core-notes.txt"], Directory.GetFiles(run).Select(Path.GetFileName));
    }

    [Fact]
    public async Task TheSupervisorPipeIsNotInheritedByRuns()
    {
        // The first contained run starts the supervisor; a second one lists its own descriptors.
        using (var first = new ContainedProcess(Spec("true"))) await first.WaitAsync();
        var supervisor = Supervisor.Pid!.Value;
        var pipe = new FileInfo($"/proc/{supervisor}/fd/0").LinkTarget!;
        Assert.StartsWith("pipe:[", pipe);
        // The harness's write end is close-on-exec (O_CLOEXEC is 02000000 in fdinfo's octal flags)…
        var writeEnd = Directory.GetFiles("/proc/self/fd").Single(fd => new FileInfo(fd).LinkTarget == pipe);
        var flags = Convert.ToInt32(File.ReadLines($"/proc/self/fdinfo/{Path.GetFileName(writeEnd)}")
                                        .First(l => l.StartsWith("flags:")).Split('	', ' ').Last(), 8);
        Assert.True((flags & 0x80000) != 0, $"the supervisor's pipe is not O_CLOEXEC (flags {Convert.ToString(flags, 8)})");
        // …so a run (and everything it starts) never holds it, and EOF reaches the supervisor when the harness dies.
        using var p = new ContainedProcess(Spec("for f in /proc/$$/fd/*; do readlink $f; done; sh -c 'for f in /proc/$$/fd/*; do readlink $f; done'; true"));
        var r = await p.WaitAsync();
        Assert.Equal(0, r.ExitCode);
        Assert.Contains("pipe:[", r.Stdout);   // its own stdout: the listing works
        Assert.DoesNotContain(pipe, r.Stdout);
    }

    [Fact]
    public async Task OnEofTheSupervisorKillsWhatIsListedAndNothingElse()
    {
        // Three sessions: one listed, one listed and then removed, one whose pid is listed with another start time
        // (as if the pid had been reused). Only the first may die.
        System.Diagnostics.Process Leader(string marker) =>
            System.Diagnostics.Process.Start("setsid", ["sh", "-c", $"sleep {marker} & exec sleep {marker}"])!;
        string a = Unique(), b = Unique(), c = Unique();
        using var listed = Leader(a);
        using var removed = Leader(b);
        using var reused = Leader(c);
        await Task.Delay(300);   // the children exist
        var psi = new System.Diagnostics.ProcessStartInfo("bash", ["-c", Supervisor.ScriptText, "corpus-supervisor", "0"])
                  { RedirectStandardInput = true, RedirectStandardError = true };
        using var supervisor = System.Diagnostics.Process.Start(psi)!;
        long Start(System.Diagnostics.Process p) => ProcStat.StartTime(p.Id)!.Value;
        supervisor.StandardInput.WriteLine($"pg {listed.Id} {Start(listed)}");
        supervisor.StandardInput.WriteLine($"pg {removed.Id} {Start(removed)}");
        supervisor.StandardInput.WriteLine($"-pg {removed.Id} {Start(removed)}");
        supervisor.StandardInput.WriteLine($"pg {reused.Id} {Start(reused) + 1}");
        supervisor.StandardInput.Close();
        Assert.True(supervisor.WaitForExit(5000));
        Assert.Contains("killed 1 process(es)", await supervisor.StandardError.ReadToEndAsync());
        Assert.True(listed.WaitForExit(2000));
        Assert.False(AnyProcessWithArg(a), "a child of the listed group survived");
        Assert.True(AnyProcessWithArg(b));
        Assert.True(AnyProcessWithArg(c));
        Native.Kill(-removed.Id, Native.SIGKILL);
        Native.Kill(-reused.Id, Native.SIGKILL);
    }

    [Fact]
    public void RunIdsAreNeverShared()
    {
        var artifacts = Path.Combine(_dir, "artifacts");
        var ids = Enumerable.Range(0, 3).Select(_ => Program.ClaimRunDir(artifacts, null).RunId).ToList();
        Assert.Equal(3, ids.Distinct().Count());
        Program.ClaimRunDir(artifacts, "mine");
        var e = Assert.Throws<ArgumentException>(() => Program.ClaimRunDir(artifacts, "mine"));
        Assert.Contains("already exists", e.Message);
    }

    [Fact]
    public void NewShmEntriesAreSweptUnlessSomeoneHoldsThem()
    {
        // A run's process is "us" here; pid 999999998 stands for it so that no real process can share the name.
        const int runPid = 999999998;
        var leaked = Path.Combine(ShmJanitor.ShmDir, $"corpus-test-leak.{runPid}");
        var foreign = Path.Combine(ShmJanitor.ShmDir, $"corpus-test-foreign-{Environment.ProcessId}");
        var held = Path.Combine(ShmJanitor.ShmDir, $"corpus-test-held.{runPid}");
        try
        {
            using var holder = new FileStream(held, FileMode.Create);
            var janitor = new ShmJanitor(_dir);
            janitor.Own(runPid);
            File.WriteAllText(leaked, "x");
            File.WriteAllText(foreign, "x");
            janitor.Dispose();
            Assert.False(File.Exists(leaked));
            Assert.Contains(Path.GetFileName(leaked), janitor.Removed);
            // New and unheld, but not named after a process of the run: someone else's, left alone.
            Assert.True(File.Exists(foreign));
            Assert.Contains(Path.GetFileName(foreign), janitor.Unattributed);
            // Created before the janitor started: not ours, kept.
            Assert.True(File.Exists(held));
        }
        finally
        {
            File.Delete(leaked);
            File.Delete(foreign);
            File.Delete(held);
        }
    }

    [Fact]
    public void ASegmentOpenedDuringTheRunIsLeftToItsOwner()
    {
        var held = Path.Combine(ShmJanitor.ShmDir, $"corpus-test-live.999999998");
        try
        {
            var janitor = new ShmJanitor(_dir);
            janitor.Own(999999998);
            using (new FileStream(held, FileMode.Create))
            {
                janitor.Dispose();
                Assert.True(File.Exists(held));
            }
        }
        finally { File.Delete(held); }
    }

    [Fact]
    public void TheLedgerOfADeadHarnessIsFinished()
    {
        var leaked = Path.Combine(ShmJanitor.ShmDir, "mono.999999997");
        var ledger = Path.Combine(_dir, "shm-999999999-1.ledger");
        File.WriteAllLines(ledger, ["#pids 999999997", .. Directory.GetFileSystemEntries(ShmJanitor.ShmDir).Select(Path.GetFileName).OfType<string>()]);
        File.WriteAllText(leaked, "x");
        try
        {
            Assert.True(ShmJanitor.CleanStale(_dir).Entries >= 1);
            Assert.False(File.Exists(leaked));
            Assert.False(File.Exists(ledger));
        }
        finally { File.Delete(leaked); }
    }
    [Fact]
    public void LedgerFieldsKeepSpacesAndEscapes()
    {
        string[] fields = ["/a dir/with spaces", "100%", "tab\there", "back\\slash", "line\nbreak", "plain"];
        var line = LedgerEntry.Format("teardown", fields);
        Assert.DoesNotContain("  ", line);
        Assert.Equal(7, line.Split(' ').Length);
        var (kind, back) = LedgerEntry.Parse(line);
        Assert.Equal("teardown", kind);
        Assert.Equal(fields, back);
    }

    [Fact]
    public void ADeadHarnesssEntriesWithSpacesInTheirPathsAreFinished()
    {
        // A checkout whose path has spaces: a crash run's folder and a subject kind's teardown script live there.
        var checkout = Directory.CreateDirectory(Path.Combine(_dir, "my checkout", "with  two spaces")).FullName;
        var run = Directory.CreateDirectory(Path.Combine(checkout, "run 0001")).FullName;
        File.WriteAllText(Path.Combine(run, "core"), "core");
        var script = Path.Combine(checkout, "tear down.sh");
        File.WriteAllText(script, "echo \"$1\" > \"$2/torn down\"\n");
        DeadLedger(LedgerEntry.Format("core", run), LedgerEntry.Format("teardown", "bash", script, "arg with spaces", checkout));
        var left = Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
        Assert.Equal(1, left.Cores);
        Assert.Equal(1, left.Teardowns);
        Assert.False(File.Exists(Path.Combine(run, "core")));
        Assert.Equal("arg with spaces\n", File.ReadAllText(Path.Combine(checkout, "torn down")));
    }

    [Fact]
    public async Task ASigkilledWritersTeardownRunsWithPathsWithSpaces()
    {
        // A stand-in harness (bash) holds the supervisor's pipe, registers a teardown whose script and folder have
        // spaces, and is SIGKILLed: the supervisor, at EOF, must run the command with its fields intact.
        var checkout = Directory.CreateDirectory(Path.Combine(_dir, "a checkout", "cell dir")).FullName;
        var script = Path.Combine(checkout, "cell script.sh");
        File.WriteAllText(script, "[ \"$1\" = down-all ] && touch \"$2/torn down\"\n");
        var entry = LedgerEntry.Format("teardown", "bash", script, "down-all", checkout);
        var psi = new System.Diagnostics.ProcessStartInfo("setsid",
            ["bash", "-c", "exec 3> >(exec bash -c \"$CORPUS_SUPERVISOR\" corpus-supervisor $$); echo \"$0\" >&3; echo up; exec sleep 300", entry])
            { RedirectStandardOutput = true };
        psi.Environment["CORPUS_SUPERVISOR"] = Supervisor.ScriptText;
        using var writer = System.Diagnostics.Process.Start(psi)!;
        Assert.Equal("up", await writer.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(10)));
        var marker = Path.Combine(checkout, "torn down");
        Assert.False(File.Exists(marker));
        writer.Kill();
        var until = DateTime.UtcNow.AddSeconds(10);
        while (!File.Exists(marker) && DateTime.UtcNow < until) await Task.Delay(20);
        Assert.True(File.Exists(marker), "the supervisor did not run the teardown of the killed writer");
    }

    [Fact]
    public async Task ASigkilledHarnesssToolDiesWithIt()
    {
        // A real harness runs a long tool through ToolRunner and is SIGKILLed: its supervisor kills the tool's group.
        var marker = Unique();
        var psi = new System.Diagnostics.ProcessStartInfo("dotnet",
            [typeof(Program).Assembly.Location, "selftest-child", "--mode", "tool", "--dir", _dir]) { RedirectStandardOutput = true };
        psi.Environment["CORPUS_SELFTEST_SLEEP"] = marker;
        using var harness = System.Diagnostics.Process.Start(psi)!;
        Assert.Equal("tool-starting", await harness.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(30)));
        var until = DateTime.UtcNow.AddSeconds(10);
        while (!AnyProcessWithArg(marker) && DateTime.UtcNow < until) await Task.Delay(20);
        Assert.True(AnyProcessWithArg(marker), "the tool never started");
        await Task.Delay(200);   // the harness tells its supervisor right after the start
        harness.Kill();
        await harness.WaitForExitAsync();
        until = DateTime.UtcNow.AddSeconds(10);
        while (AnyProcessWithArg(marker) && DateTime.UtcNow < until) await Task.Delay(20);
        Assert.False(AnyProcessWithArg(marker), "the tool outlived the killed harness");
    }

    [Fact]
    public void AToolThatIsNotThereFailsAsBeforeAndAToolsOutputIsRead()
    {
        Assert.Throws<System.ComponentModel.Win32Exception>(() =>
            Corpus.Harness.Capture.ToolRunner.Instance.Run("no-such-tool-" + Unique(), [], TimeSpan.FromSeconds(5)));
        Assert.Throws<System.ComponentModel.Win32Exception>(() =>
            Corpus.Harness.Capture.ToolRunner.Instance.Run(Path.Combine(_dir, "not there"), [], TimeSpan.FromSeconds(5)));
        var r = Corpus.Harness.Capture.ToolRunner.Instance.Run("sh", ["-c", "echo out; echo err >&2; exit 4"], TimeSpan.FromSeconds(5));
        Assert.Equal((4, "out\n", "err\n"), (r.ExitCode, r.Stdout, r.Stderr));
    }

    /// <summary>
    /// A tool that ends while a process it started, in a session of its own, keeps its stderr (as Wine's services
    /// started by a prefix's first reg.exe do): its result comes a few seconds after its end, with what it wrote and a
    /// note, not after the other process ends. A fixture cell waited 10 minutes, and a SIGTERM, on such a reg query.
    /// </summary>
    [Fact]
    public void AToolWhoseOutputOutlivesItEndsAllTheSame()
    {
        var marker = "held-" + Unique();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        try
        {
            var r = Corpus.Harness.Capture.ToolRunner.Instance.Run("sh",
                ["-c", $"echo out; echo err >&2; setsid sh -c 'sleep 120; :' {marker} </dev/null >/dev/null & exit 3"], TimeSpan.FromSeconds(60));
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"the result came after {clock.Elapsed.TotalSeconds:0} s");
            Assert.Equal((3, "out\n", false), (r.ExitCode, r.Stdout, r.TimedOut));
            Assert.StartsWith("err\n", r.Stderr);
            Assert.Contains("the tool's output stayed open 5 s after it ended: processes it started hold it", r.Stderr);
        }
        finally { ToolRunnerKill(marker); }
    }

    /// <summary>Kills the session the marked process leads (its sleep too).</summary>
    private static void ToolRunnerKill(string marker)
    {
        var procs = Directory.EnumerateDirectories("/proc").Select(d => int.TryParse(Path.GetFileName(d), out var p) ? p : 0).Where(p => p > 0).ToList();
        string Read(int pid, string f) { try { return File.ReadAllText($"/proc/{pid}/{f}"); } catch (IOException) { return ""; } }
        int Session(int pid) => Read(pid, "stat") is var st && st.LastIndexOf(')') is var i and > 0
            && st[(i + 2)..].Split(' ') is { Length: > 4 } f && int.TryParse(f[3], out var sid) ? sid : 0;
        foreach (var leader in procs.Where(p => Read(p, "cmdline").Contains(marker)))
            foreach (var p in procs.Where(p => Session(p) == leader)) Native.Kill(p, Native.SIGKILL);
    }

    [Fact]
    public void ADeadHarnesssRuntimeFilesAreRemovedAndNoOneElses()
    {
        // The owner 999999999-1 is dead (a pid above pid_max); 999999999-2 has no ledger here.
        var tmp = Path.GetTempPath();
        string[] ours = [$"clr-debug-pipe-999999999-1-in", $"clr-debug-pipe-999999999-1-out", $"dotnet-diagnostic-999999999-1-socket"];
        var stranger = Path.Combine(tmp, "dotnet-diagnostic-999999999-2-socket");
        foreach (var f in ours) File.WriteAllText(Path.Combine(tmp, f), "");
        File.WriteAllText(stranger, "");
        try
        {
            DeadLedger(LedgerEntry.Format("map", "999999990"));
            Leftovers.Clean(_dir, Capture.ToolRunner.Instance);
            Assert.All(ours, f => Assert.False(File.Exists(Path.Combine(tmp, f)), f));
            Assert.True(File.Exists(stranger), "another owner's diagnostic socket was deleted");
        }
        finally
        {
            foreach (var f in ours) File.Delete(Path.Combine(tmp, f));
            File.Delete(stranger);
        }
    }
}
