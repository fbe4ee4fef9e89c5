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
        using var p = new ContainedProcess(Spec("sleep 300.123 & sleep 300.124", timeoutSec: 1));
        var r = await p.WaitAsync();
        Assert.True(r.TimedOut);
        Assert.Equal("timeout", r.Status);
        Assert.InRange(r.WallSeconds, 0.9, 10);
        Assert.False(AnyProcessWithArg("300.123"), "the background child survived the kill");
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

    [Fact]
    public void StaleCgroupsOfADeadHarnessAreRemoved()
    {
        // Without memory cgroups the RSS watchdog contains runs; MemoryCapEndsTheRunAsAnOutcome covers it.
        if (MemoryCgroup.Locate().Parent is null) return;
        // pid 999999999 cannot exist, so this cgroup belongs to a dead harness.
        var cg = MemoryCgroup.TryCreate("999999999-1", 64 << 20, out _)!;
        using var sleeper = System.Diagnostics.Process.Start("/bin/sh", ["-c", $"echo $$ > {cg.Dir}/cgroup.procs; exec sleep 300.125"]);
        var until = DateTime.UtcNow.AddSeconds(5);
        while (cg.Members().Count == 0 && DateTime.UtcNow < until) Thread.Sleep(20);
        Assert.NotEmpty(cg.Members());
        Assert.True(MemoryCgroup.CleanStale() >= 1);
        Assert.False(Directory.Exists(cg.Dir));
        Assert.True(sleeper.WaitForExit(5000));
    }

    [Fact]
    public void StaleCgroupsUnderAnotherParentAreFoundToo()
    {
        var (parent, v2, _) = MemoryCgroup.Locate();
        if (parent is null || v2) return;   // v1 layout here; the walk is the same on v2
        // As if a harness had run from another shell's cgroup and been killed.
        var otherParent = $"/sys/fs/cgroup/memory/corpus-xparent-{Environment.ProcessId}";
        var stale = Path.Combine(otherParent, MemoryCgroup.Prefix, "999999999-7");
        Directory.CreateDirectory(stale);
        try
        {
            using var sleeper = System.Diagnostics.Process.Start("/bin/sh", ["-c", $"echo $$ > {stale}/cgroup.procs; exec sleep 300.126"]);
            var until = DateTime.UtcNow.AddSeconds(5);
            while (File.ReadAllText(Path.Combine(stale, "cgroup.procs")).Trim().Length == 0 && DateTime.UtcNow < until) Thread.Sleep(20);
            Assert.True(MemoryCgroup.CleanStale() >= 1);
            Assert.False(Directory.Exists(stale));
            Assert.True(sleeper.WaitForExit(5000));
        }
        finally
        {
            if (Directory.Exists(stale)) Directory.Delete(stale);
            Directory.Delete(Path.Combine(otherParent, MemoryCgroup.Prefix));
            Directory.Delete(otherParent);
        }
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
            Assert.True(ShmJanitor.CleanStale(_dir) >= 1);
            Assert.False(File.Exists(leaked));
            Assert.False(File.Exists(ledger));
        }
        finally { File.Delete(leaked); }
    }
}
