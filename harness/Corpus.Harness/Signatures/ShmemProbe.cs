using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.LostMemory;

namespace Corpus.Harness.Signatures;

/// <summary>What the shmem family saw when the program said it had leaked.</summary>
public sealed record LeakMeasure(long BaselineBytes, long ShmemDeltaBytes, long RssBytes, int HeldObjects,
                                 long HeldFdOnlyBytes, long AfterExitDeltaBytes, IReadOnlyList<(double T, long Shmem, long Rss)> Samples);

/// <summary>
/// Samples system Shmem and the process's RSS during a run, measures at the marker with the lost-memory finder,
/// and checks after the run that Shmem came back: the memory that belongs to no process, made visible.
/// </summary>
public sealed class ShmemProbe
{
    private readonly ShmemSpec _spec;
    private readonly long _baseline;
    private readonly List<(double, long, long)> _samples = [];
    private long _delta = -1, _rss = -1, _fdOnly = -1;
    private int _held = -1;

    public ShmemProbe(ShmemSpec spec)
    {
        _spec = spec;
        _baseline = SystemShmemBytes();
    }

    public static long SystemShmemBytes() => ProcKb("/proc/meminfo", "Shmem:") * 1024;

    public static long RssBytes(int pid) => ProcKb($"/proc/{pid}/status", "VmRSS:") * 1024;

    private static long ProcKb(string file, string key)
    {
        try
        {
            var line = File.ReadLines(file).FirstOrDefault(l => l.StartsWith(key));
            return line is null ? 0 : long.Parse(line[key.Length..].Trim().Split(' ')[0]);
        }
        catch (IOException) { return 0; }
    }

    /// <summary>Runs alongside the process until it exits.</summary>
    public async Task<LeakMeasure> WatchAsync(ContainedProcess p)
    {
        var marker = new TaskCompletionSource();
        p.Line += (line, _, _) => { if (line.Contains(_spec.Marker)) marker.TrySetResult(); };
        var measured = false;
        while (!p.HasExited)
        {
            lock (_samples) _samples.Add((Math.Round(p.Elapsed, 2), SystemShmemBytes() - _baseline, RssBytes(p.Pid)));
            if (marker.Task.IsCompleted && !measured && p.Elapsed > 0)
            {
                await Task.Delay(TimeSpan.FromSeconds(_spec.SettleSec));
                if (p.HasExited) break;
                Measure(p.Pid);
                measured = true;
            }
            await Task.Delay(100);
        }
        // Whatever the outcome, the memory must come back once the process is gone.
        var after = SystemShmemBytes() - _baseline;
        for (var i = 0; i < 50 && Math.Abs(after) > ReturnSlack; i++)
        {
            await Task.Delay(100);
            after = SystemShmemBytes() - _baseline;
        }
        lock (_samples)
            return new LeakMeasure(_baseline, _delta, _rss, _held, _fdOnly, after, [.. _samples]);
    }

    /// <summary>How far from the baseline "back" may be: the spec's fraction of the baseline.</summary>
    public long ReturnSlack => (long)(_spec.ReturnTolerance * _baseline);

    private void Measure(int pid)
    {
        _delta = SystemShmemBytes() - _baseline;
        _rss = RssBytes(pid);
        var report = Scanner.Scan(new ScanOptions { Pid = pid, IncludeSelf = false });
        var entry = report.Processes.FirstOrDefault(e => e.Pid == pid);
        _held = entry?.FdOnlyCount ?? 0;
        _fdOnly = entry?.FdOnlySizeBytes ?? 0;
    }

    /// <summary>The verdict of the shmem family, and why.</summary>
    public (Outcome Outcome, string Detail) Judge(LeakMeasure m)
    {
        double leak = _spec.LeakBytes, tol = _spec.Tolerance * leak;
        static string Mb(long b) => $"{b / 1048576.0:0.0} MB";
        var facts = $"Shmem {(m.ShmemDeltaBytes >= 0 ? "+" : "")}{Mb(m.ShmemDeltaBytes)}, RSS {Mb(m.RssBytes)}, "
                    + $"{m.HeldObjects} unmapped objects held by fd ({Mb(m.HeldFdOnlyBytes)}), after exit {Mb(m.AfterExitDeltaBytes)}";
        if (m.ShmemDeltaBytes < 0 && m.HeldObjects < 0) return (Outcome.WrongFailure, "the marker never came: " + facts);
        if (Math.Abs(m.AfterExitDeltaBytes) > Math.Max(ReturnSlack, tol))
            return (Outcome.Error, $"containment: Shmem did not return to the baseline after the run; {facts}");
        var grew = Math.Abs(m.ShmemDeltaBytes - leak) <= tol;
        var held = Math.Abs(m.HeldFdOnlyBytes - leak) <= tol;
        var small = m.RssBytes <= _spec.MaxRssFraction * leak;
        if (grew && held && small) return (Outcome.Reproduced, $"the memory belongs to no process: {facts}");
        var quiet = m.ShmemDeltaBytes <= tol && m.HeldFdOnlyBytes <= tol && Math.Abs(m.AfterExitDeltaBytes) <= ReturnSlack;
        if (quiet) return (Outcome.Clean, $"nothing held: {facts}");
        return (Outcome.WrongFailure, $"not the leak's shape (expected +{Mb(_spec.LeakBytes)} ±{_spec.Tolerance:P0}, RSS ≤ {_spec.MaxRssFraction:P0}): {facts}");
    }
}
