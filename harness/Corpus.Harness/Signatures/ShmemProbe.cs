using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.LostMemory;

namespace Corpus.Harness.Signatures;

/// <summary>What the shmem family saw when the program said it had leaked.</summary>
/// <param name="ShmemDeltaBytes">Shared memory charged to the cell at the marker (its cgroup's memory.stat shmem).</param>
/// <param name="AfterExitDeltaBytes">The cell's shared memory still charged once its processes are gone.</param>
/// <param name="HostShmemDeltaBytes">Host-wide Shmem growth at the marker: context only, other jobs move it.</param>
/// <param name="Attribution">Where the cell's figures come from ("cgroup …" or, without one, "host-wide Shmem").</param>
/// <param name="HeldBy">The processes of the cell that hold the objects the program holds by descriptor only (the
/// program, and under Wine wineserver); null on Windows, where the handle table is read for the program alone.</param>
public sealed record LeakMeasure(long BaselineBytes, long ShmemDeltaBytes, long RssBytes, int HeldObjects,
                                 long HeldFdOnlyBytes, long AfterExitDeltaBytes, IReadOnlyList<(double T, long Shmem, long Rss)> Samples,
                                 long HostShmemDeltaBytes = 0, string Attribution = "cgroup",
                                 IReadOnlyList<(double T, long Shmem)>? HostSamples = null,
                                 IReadOnlyList<LeakHolder>? HeldBy = null);

/// <summary>
/// Watches one run for the memory that belongs to no process: the shared memory charged to the cell's own cgroup,
/// the process's RSS, and at the marker the unmapped shm/memfd objects it holds by descriptor (the lost-memory
/// finder, over every process of the cell's cgroup, so it also names the other holders of those objects: under Wine,
/// wineserver holds each section too). After the run the cell's shared memory must be gone. Host-wide Shmem is sampled beside it as context
/// only; it decides nothing, because another program on the host moves it.
/// On Windows there is no per-cell counter of section pages. The cell's figure is what the run's process holds: the
/// page-file-backed sections it has handles to, from the system handle table (<see cref="WindowsSections"/>), with
/// their sizes; RSS is its working set. The system commit charge (GetPerformanceInfo), where such a section is charged
/// when created, is sampled as host-wide context and decides nothing. After the run, the sections that any process
/// left in the run's Job Object still holds must be none.
/// </summary>
public sealed class ShmemProbe
{
    private readonly ShmemSpec _spec;
    public ShmemSpec Spec => _spec;
    private readonly long _hostBaseline;
    private readonly List<(double, long, long)> _samples = [];
    private readonly List<(double, long)> _host = [];
    private long _delta = -1, _rss = -1, _fdOnly = -1, _hostDelta;
    private int _held = -1;
    private long _mapped = -1;
    private string? _problem;
    private IReadOnlyList<LeakHolder>? _heldBy;

    public ShmemProbe(ShmemSpec spec)
    {
        _spec = spec;
        _hostBaseline = SystemShmemBytes();
    }

    /// <summary>Host-wide Shmem; on Windows the system commit charge.</summary>
    public static long SystemShmemBytes() =>
        OperatingSystem.IsWindows() ? Containment.WindowsNative.CommitTotalBytes() : ProcKb("/proc/meminfo", "Shmem:") * 1024;

    /// <summary>The process's RSS; on Windows its working set.</summary>
    public static long RssBytes(int pid) =>
        OperatingSystem.IsWindows() ? Containment.WindowsNative.Counters(pid)?.WorkingSet ?? 0 : ProcKb($"/proc/{pid}/status", "VmRSS:") * 1024;

    private static long ProcKb(string file, string key)
    {
        try
        {
            var line = File.ReadLines(file).FirstOrDefault(l => l.StartsWith(key));
            return line is null ? 0 : long.Parse(line[key.Length..].Trim().Split(' ')[0]);
        }
        catch (IOException) { return 0; }
    }

    /// <summary>The cell's shared memory: its cgroup's own counter, or host-wide growth where there is no cgroup.</summary>
    private long CellShmem(ContainedProcess p) =>
        OperatingSystem.IsWindows() ? SystemShmemBytes() - _hostBaseline
        : p.Cgroup is { } cg ? cg.StatBytes("shmem") : SystemShmemBytes() - _hostBaseline;

    /// <summary>Runs alongside the process until it exits.</summary>
    public async Task<LeakMeasure> WatchAsync(ContainedProcess p)
    {
        var marker = new ManualResetEventSlim();
        p.Line += (line, _, _) => { if (line.Contains(_spec.Marker)) marker.Set(); };
        // The measure waits for the marker on a thread of its own, not between samples: under Wine at load 20 one
        // sample of the Windows counters took 3 s, and a loop that measured between samples came after the hold.
        var measure = Task.Factory.StartNew(() =>
        {
            while (!marker.Wait(50)) if (p.HasExited) return;
            Thread.Sleep(TimeSpan.FromSeconds(_spec.SettleSec));
            if (!p.HasExited) Measure(p);
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        var sample = Task.Factory.StartNew(() =>
        {
            while (!p.HasExited)
            {
                var t = Math.Round(p.Elapsed, 2);
                var host = SystemShmemBytes() - _hostBaseline;
                var cell = OperatingSystem.IsWindows() ? host : CellShmem(p);
                var rss = RssBytes(p.Pid);
                lock (_samples)
                {
                    _samples.Add((t, cell, rss));
                    _host.Add((t, host));
                }
                Thread.Sleep(100);
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        await Task.WhenAll(measure, sample);
        // Whatever the outcome, the cell's shared memory must be gone once its processes are.
        // Windows: what the processes still in the run's job hold (a child that inherited a section handle, say).
        long After() => OperatingSystem.IsWindows() ? (p.JobMembers ?? []).Sum(pid => WindowsSections.Of(pid).SectionBytes) : CellShmem(p);
        var after = After();
        for (var i = 0; i < 50 && Math.Abs(after) > ReturnSlack; i++)
        {
            await Task.Delay(100);
            after = After();
        }
        var attribution = OperatingSystem.IsWindows()
            ? "page-file-backed sections the process holds by handle (system handle table, NtQuerySection); the system commit "
              + "charge is host-wide context" + (Containment.WindowsNative.WineVersion() is { } wine
                  ? $" (under Wine {wine} it is computed from Linux's /proc/meminfo, where section pages are Cached, counted as free)" : "")
            : p.Cgroup is { } cg ? $"cgroup {cg.Dir}" : "host-wide Shmem (no memory cgroup here)";
        lock (_samples)
            return new LeakMeasure(_hostBaseline, _delta, _rss, _held, _fdOnly, after, [.. _samples],
                                   _hostDelta, attribution, [.. _host], _heldBy);
    }

    /// <summary>How far from zero the cell's shared memory may be after the run, in bytes.</summary>
    public long ReturnSlack => (long)(_spec.ReturnToleranceMB * 1048576);

    private void Measure(ContainedProcess p)
    {
        _delta = CellShmem(p);
        _hostDelta = SystemShmemBytes() - _hostBaseline;
        _rss = RssBytes(p.Pid);
        if (OperatingSystem.IsWindows())
        {
            var held = WindowsSections.Of(p.Pid);
            (_held, _fdOnly, _delta) = (held.Sections, held.SectionBytes, held.SectionBytes);
            _mapped = held.MappedBytes;
            _problem = held.Problem;
            return;
        }
        // The program and every other process of the run's cgroup (under Wine: wineserver and Wine's services), so each
        // object the program holds names all its holders; without a cgroup, the program alone.
        var cell = (p.Cgroup?.Members() ?? []).Append(p.Pid).ToHashSet();
        var report = Scanner.Scan(new ScanOptions { Pid = p.Pid, Pids = cell, IncludeSelf = false });
        var entry = report.Processes.FirstOrDefault(e => e.Pid == p.Pid);
        _held = entry?.FdOnlyCount ?? 0;
        _fdOnly = entry?.FdOnlySizeBytes ?? 0;
        _heldBy = LeakHolder.Of(entry);
    }

    /// <summary>The verdict of the shmem family, and why.</summary>
    public (Outcome Outcome, string Detail) Judge(LeakMeasure m)
    {
        double leak = _spec.LeakBytes, tol = _spec.Tolerance * leak;
        static string Mb(long b) => $"{b / 1048576.0:0.0} MB";
        var facts = OperatingSystem.IsWindows() ? $"working set {Mb(m.RssBytes)}, " : $"cell shmem {(m.ShmemDeltaBytes >= 0 ? "+" : "")}{Mb(m.ShmemDeltaBytes)}, RSS {Mb(m.RssBytes)}, ";
        facts += (OperatingSystem.IsWindows()
                        ? $"{m.HeldObjects} page-file sections held by handle ({Mb(m.HeldFdOnlyBytes)}), mapped views {Mb(_mapped)}, "
                          + $"system commit {(m.HostShmemDeltaBytes >= 0 ? "+" : "")}{Mb(m.HostShmemDeltaBytes)} (context)"
                          + (_problem is null ? "" : $" ({_problem})")
                        : $"{m.HeldObjects} unmapped objects held by fd ({Mb(m.HeldFdOnlyBytes)})")
                    + $", after exit {Mb(m.AfterExitDeltaBytes)}";
        if (m.ShmemDeltaBytes < 0 && m.HeldObjects < 0) return (Outcome.WrongFailure, "the marker never came: " + facts);
        if (Math.Abs(m.AfterExitDeltaBytes) > ReturnSlack)
            return (Outcome.Error, $"containment: the cell's shared memory was still charged after the run (more than {_spec.ReturnToleranceMB} MB); {facts}");
        var grew = Math.Abs(m.ShmemDeltaBytes - leak) <= tol;
        var held = Math.Abs(m.HeldFdOnlyBytes - leak) <= tol;
        var small = m.RssBytes <= _spec.MaxRssFraction * leak;
        if (grew && held && small) return (Outcome.Reproduced, $"the memory belongs to no process: {facts}");
        var quiet = m.ShmemDeltaBytes <= tol && m.HeldFdOnlyBytes <= tol;
        if (quiet) return (Outcome.Clean, $"nothing held: {facts}");
        return (Outcome.WrongFailure, $"not the leak's shape (expected +{Mb(_spec.LeakBytes)} ±{_spec.Tolerance:P0}, RSS ≤ {_spec.MaxRssFraction:P0}): {facts}");
    }
}
