using System.Diagnostics;

namespace Corpus.Harness.Containment;

/// <summary>
/// A Linux run: the program leads its own session (setsid) and sits in its own memory cgroup when the machine has
/// one, else an RSS watchdog caps it. A run on the CPU clock is counted by its v2 memory group, else by a cpuacct
/// group of its own (v1), else by its session's processes in /proc. Its cgroups and process group go to the
/// supervisor and the ledger while they live.
/// </summary>
internal sealed class CgroupSession : IRunSession
{
    private static int _sequence;

    private readonly Process _process;
    private readonly MemoryCgroup? _cgroup;
    private readonly CpuacctCgroup? _cpuacct;
    private double _sessionCpu;
    private readonly long _memoryBytes;
    private readonly bool _cpuClock;
    private readonly List<string> _records = [];

    public int Pid { get; }
    public string Containment { get; private set; }
    /// <summary>The run's own memory cgroup, or null where the machine has none.</summary>
    public MemoryCgroup? Cgroup => _cgroup;

    public CgroupSession(ProcessSpec spec, Action<string?, bool> onLine)
    {
        _memoryBytes = spec.MemoryBytes;
        _cpuClock = spec.CpuTimeout is not null;
        // The owner's pid and start time lead the name: a later cleanup can prove whose cgroup this is.
        var name = $"{Supervisor.Owner}-{Interlocked.Increment(ref _sequence)}";
        _cgroup = MemoryCgroup.TryCreate(name, spec.MemoryBytes, out var why, dir => Record(LedgerEntry.Format("cg", dir)));
        if (_cgroup is null) Forget();
        if (spec.CpuTimeout is not null && _cgroup is not { V2: true })
        {
            string? announced = null;
            _cpuacct = CpuacctCgroup.TryCreate(name, dir => Record(announced = LedgerEntry.Format("cg", dir)));
            if (_cpuacct is null && announced is not null) { Supervisor.Remove(announced); _records.Remove(announced); }
        }
        Containment = _cgroup is not null
            ? $"cgroup {_cgroup.Dir} (memory cap {spec.MemoryBytes >> 20} MB), session kill, timeout {spec.Timeout.TotalSeconds:0} s"
            : $"no cgroup ({why}); RSS watchdog (cap {spec.MemoryBytes >> 20} MB), session kill, timeout {spec.Timeout.TotalSeconds:0} s";
        if (_cpuClock)
            Containment += _cgroup is { V2: true } ? "; CPU counted by its cgroup's cpu.stat"
                : _cpuacct is not null ? $"; CPU counted by {_cpuacct.Dir}" : "; CPU counted over the session's processes in /proc";

        var psi = new ProcessStartInfo("setsid")
        {
            WorkingDirectory = spec.WorkDir,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        // Join the cgroup before exec so that nothing the program starts can escape it.
        var script = (_cgroup is null ? "" : "echo $$ > \"$0/cgroup.procs\" || exit 125; ")
                     + (_cpuacct is null ? "" : "echo $$ > \"$1/cgroup.procs\" || exit 125; ")
                     + "shift; " + (spec.CoreDumps ? "ulimit -c unlimited; " : "") + "exec \"$@\"";
        psi.ArgumentList.Add("/bin/sh");
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(script);
        psi.ArgumentList.Add(_cgroup?.Dir ?? "sh");
        psi.ArgumentList.Add(_cpuacct?.Dir ?? "-");
        psi.ArgumentList.Add(spec.FileName);
        foreach (var a in spec.Args) psi.ArgumentList.Add(a);
        foreach (var kv in spec.Env ?? new Dictionary<string, string>()) psi.Environment[kv.Key] = kv.Value;

        _process = new Process { StartInfo = psi };
        _process.OutputDataReceived += (_, e) => onLine(e.Data, false);
        _process.ErrorDataReceived += (_, e) => onLine(e.Data, true);
        try { _process.Start(); }
        catch
        {
            _cgroup?.Dispose();
            _cpuacct?.Dispose();
            Forget();
            _process.Dispose();
            throw;
        }
        _process.StandardInput.Close();
        Pid = _process.Id;
        // setsid made the process the leader of its own group; a supervisor kills the group if the harness dies.
        Record(LedgerEntry.Format("pg", Pid.ToString(), ProcStat.StartTime(Pid)?.ToString() ?? ""));
        // Files the kernel or the runtime may leave for this run if the harness dies before its own cleanup.
        if (spec.PerfMap) Record(LedgerEntry.Format("map", Pid.ToString()));
        if (spec.CoreDumps) Record(LedgerEntry.Format("core", spec.WorkDir));
    }

    /// <summary>Output reading starts once the facade is ready for lines.</summary>
    public void BeginOutput()
    {
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    private void Record(string entry)
    {
        Supervisor.Add(entry);
        _records.Add(entry);
    }

    private void Forget()
    {
        foreach (var e in _records) Supervisor.Remove(e);
        _records.Clear();
    }

    public bool HasExited => _process.HasExited;

    // Also waits for EOF on the output pipes; the facade stops waiting at HasExited.
    public Task WaitForExitAsync() => _process.WaitForExitAsync(CancellationToken.None);

    public long MemoryNow() => _cgroup?.UsageBytes() ?? SessionRss(Pid);

    public double? CpuSeconds()
    {
        if ((_cgroup?.CpuSeconds() ?? _cpuacct?.Seconds()) is { } counted) return counted;
        // /proc loses a process that ended unwaited-for, so the count is kept as its highest.
        return _sessionCpu = Math.Max(_sessionCpu, SessionCpu(Pid));
    }

    // A cgroup's cap is the kernel's (OOM kill); without one, the watchdog is ours.
    public bool OverMemoryCap(long used) => _cgroup is null && used > _memoryBytes;

    public int Stop()
    {
        var members = _cgroup?.Members() ?? [];
        var count = _cgroup is null ? ForSession(Pid).Count() : members.Count;
        Native.Kill(-Pid, Native.SIGKILL);
        foreach (var pid in members) Native.Kill(pid, Native.SIGKILL);
        // Remove the cgroups now rather than after the drain in WaitAsync and Dispose: under load that is a second later.
        _cgroup?.Remove();
        _cpuacct?.Dispose();
        return count;
    }

    public void KillTree()
    {
        Native.Kill(-Pid, Native.SIGKILL);
        _cgroup?.KillAll(TimeSpan.FromSeconds(5));
        _cpuacct?.KillAll();
    }

    public SessionEnd Finish()
    {
        var peak = _cgroup?.PeakBytes() ?? 0;
        var capped = _cgroup?.OomKilled() ?? false;
        KillTree();                      // leftovers holding our pipes would block the drain below
        _process.WaitForExit();
        // After the kill: nothing of the run is left to add to its count.
        var cpu = _cpuClock ? CpuSeconds() : null;
        int? code = _process.ExitCode;
        string? signal = null;
        // .NET reports a death by signal as 128 + signal number.
        if (code is > 128 and < 128 + 32) { signal = Native.SignalName(code.Value - 128); code = null; }
        return new SessionEnd(code, signal, peak, capped) { CpuSeconds = cpu };
    }

    public void Signal(int signal) => Native.Kill(Pid, signal);

    public void Dispose()
    {
        KillTree();
        _cgroup?.Dispose();
        _cpuacct?.Dispose();
        Forget();
        _process.Dispose();
    }

    private static IEnumerable<string[]> ForSession(int sid)
    {
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out _)) continue;
            string[] fields;
            try
            {
                var stat = File.ReadAllText(Path.Combine(dir, "stat"));
                fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                // fields[3] is the session id.
                if (fields.Length < 22 || int.Parse(fields[3]) != sid) continue;
            }
            catch (Exception e) when (e is IOException or FormatException or IndexOutOfRangeException or UnauthorizedAccessException) { continue; }
            yield return fields;
        }
    }

    /// <summary>The CPU seconds of the session's processes and of the children they waited for (utime, stime, cutime,
    /// cstime), for machines without a cgroup to count them.</summary>
    internal static double SessionCpu(int sid)
    {
        long ticks = 0;
        // fields[11..14]: utime, stime, cutime, cstime in clock ticks (USER_HZ, 100 on Linux).
        foreach (var fields in ForSession(sid))
            for (var i = 11; i <= 14; i++)
                if (long.TryParse(fields[i], out var t)) ticks += t;
        return ticks / 100.0;
    }

    /// <summary>Sum of RSS over the session, for machines without a memory cgroup.</summary>
    internal static long SessionRss(int sid)
    {
        long total = 0;
        // fields[21] is RSS in pages.
        foreach (var fields in ForSession(sid))
            if (long.TryParse(fields[21], out var pages)) total += pages * Environment.SystemPageSize;
        return total;
    }
}
