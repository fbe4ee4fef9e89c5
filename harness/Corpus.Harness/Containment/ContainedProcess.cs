using System.Diagnostics;
using System.Text;

namespace Corpus.Harness.Containment;

/// <param name="CoreDumps">Lift the core size limit so a crash leaves a core in WorkDir (with core_pattern "core").</param>
public sealed record ProcessSpec(
    string FileName, IReadOnlyList<string> Args, string WorkDir, string StdoutFile, string StderrFile,
    TimeSpan Timeout, long MemoryBytes, IReadOnlyDictionary<string, string>? Env = null, bool CoreDumps = false);

public sealed record MemorySample(double Seconds, long Bytes);

public sealed record RunResult(
    int? ExitCode, string? Signal, bool TimedOut, bool MemoryCapped, double WallSeconds, long PeakBytes,
    string Stdout, string Stderr, string StdoutFile, string StderrFile, string Containment,
    IReadOnlyList<MemorySample> Memory)
{
    public string Status => TimedOut ? "timeout" : MemoryCapped ? "memory-cap"
        : Signal is not null ? Signal : $"exit {ExitCode}";
}

/// <summary>
/// Runs one process under a memory cap, a wall-clock cap and a whole-tree kill. On Linux the process leads its own
/// session (setsid) and sits in its own memory cgroup when the machine has one; on Windows it runs in its own Job
/// Object (<see cref="WindowsJob"/>). Either way nothing it started survives the run.
/// </summary>
public sealed class ContainedProcess : IDisposable
{
    private const int MaxKeptChars = 16 << 20;
    private static int _sequence;

    private readonly ProcessSpec _spec;
    private readonly Process _process = null!;   // the Linux path's; null on Windows
    private readonly WindowsJob? _job;           // the Windows path's
    private readonly MemoryCgroup? _cgroup;
    private readonly string _containment;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly StringBuilder _out = new(), _err = new();
    private readonly StreamWriter _outFile, _errFile;
    private readonly List<MemorySample> _memory = [];
    private long _peak;
    private volatile bool _timedOut, _memoryCapped, _interrupted;
    private bool _closed;
    private readonly List<string> _records = [];
    private CancellationTokenRegistration _onInterrupt;
    private int _stoppedCount;

    /// <summary>Every output line as it arrives: (line, isStderr, seconds since start).</summary>
    public event Action<string, bool, double>? Line;

    public int Pid { get; }
    /// <summary>The run's own memory cgroup, or null where the machine has none: what the cell is charged for.</summary>
    public MemoryCgroup? Cgroup => _cgroup;
    public double Elapsed => _clock.Elapsed.TotalSeconds;
    /// <summary>Windows: the pids in the run's Job Object now; null on Linux.</summary>
    public IReadOnlyList<int>? JobMembers => _job?.Members();
    /// <summary>Windows: the memory limits the Job Object holds, as the kernel reads them back; null on Linux.</summary>
    public (long Process, long Job)? JobMemoryLimits => _job?.Limits() is { } l ? ((long)l.ProcessMemoryLimit, (long)l.JobMemoryLimit) : null;
    public bool HasExited => _job?.HasExited ?? _process.HasExited;

    /// <exception cref="OperationCanceledException">The harness was interrupted (SIGINT/SIGTERM): no new run starts.</exception>
    /// <param name="onLine">Subscribed to <see cref="Line"/> before any output is read, so no early line is missed.</param>
    public ContainedProcess(ProcessSpec spec, Action<string, bool, double>? onLine = null)
    {
        Line += onLine;
        Interrupt.ThrowIfRequested();
        _spec = spec;
        if (OperatingSystem.IsWindows())
        {
            _containment = $"job object (memory cap {spec.MemoryBytes >> 20} MB per process and per job, kill on job close), "
                           + $"job kill, timeout {spec.Timeout.TotalSeconds:0} s";
            Directory.CreateDirectory(Path.GetDirectoryName(spec.StdoutFile)!);
            _outFile = new StreamWriter(spec.StdoutFile) { AutoFlush = true };
            _errFile = new StreamWriter(spec.StderrFile) { AutoFlush = true };
            try { _job = new WindowsJob(spec, OnLine); }
            catch
            {
                _outFile.Dispose();
                _errFile.Dispose();
                throw;
            }
            Pid = _job.Pid;
            _onInterrupt = Interrupt.Token.Register(StopForInterrupt);
            return;
        }
        // The owner's pid and start time lead the name: a later cleanup can prove whose cgroup this is.
        var name = $"{Supervisor.Owner}-{Interlocked.Increment(ref _sequence)}";
        _cgroup = MemoryCgroup.TryCreate(name, spec.MemoryBytes, out var why, dir => Record($"cg {dir}"));
        if (_cgroup is null) Forget();
        _containment = _cgroup is not null
            ? $"cgroup {_cgroup.Dir} (memory cap {spec.MemoryBytes >> 20} MB), session kill, timeout {spec.Timeout.TotalSeconds:0} s"
            : $"no cgroup ({why}); RSS watchdog (cap {spec.MemoryBytes >> 20} MB), session kill, timeout {spec.Timeout.TotalSeconds:0} s";

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
                     + (spec.CoreDumps ? "ulimit -c unlimited; " : "") + "exec \"$@\"";
        psi.ArgumentList.Add("/bin/sh");
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(script);
        psi.ArgumentList.Add(_cgroup?.Dir ?? "sh");
        psi.ArgumentList.Add(spec.FileName);
        foreach (var a in spec.Args) psi.ArgumentList.Add(a);
        foreach (var kv in spec.Env ?? new Dictionary<string, string>()) psi.Environment[kv.Key] = kv.Value;

        Directory.CreateDirectory(Path.GetDirectoryName(spec.StdoutFile)!);
        _outFile = new StreamWriter(spec.StdoutFile) { AutoFlush = true };
        _errFile = new StreamWriter(spec.StderrFile) { AutoFlush = true };
        _process = new Process { StartInfo = psi };
        _process.OutputDataReceived += (_, e) => OnLine(e.Data, false);
        _process.ErrorDataReceived += (_, e) => OnLine(e.Data, true);
        try { _process.Start(); }
        catch
        {
            _cgroup?.Dispose();
            Forget();
            _outFile.Dispose();
            _errFile.Dispose();
            throw;
        }
        _process.StandardInput.Close();
        Pid = _process.Id;
        // setsid made the process the leader of its own group; a supervisor kills the group if the harness dies.
        Record($"pg {Pid} {ProcStat.StartTime(Pid)}");
        // Files the kernel or the runtime may leave for this run if the harness dies before its own cleanup.
        if (WritesPerfMap(spec)) Record($"map {Pid}");
        if (spec.CoreDumps) Record($"core {spec.WorkDir}");
        // Kill at once, on the signal's own thread; WaitAsync then finishes the kill and reports.
        _onInterrupt = Interrupt.Token.Register(StopForInterrupt);
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    private void StopForInterrupt()
    {
        if (Interlocked.Exchange(ref _stoppedCount, 1) == 1) return;
        _interrupted = true;
        if (_job is not null)
        {
            Interrupt.Stopped(Math.Max(_job.KillTree(), 1));
            return;
        }
        var members = _cgroup?.Members() ?? [];
        var count = _cgroup is null ? SessionMembers(Pid) : members.Count;
        Native.Kill(-Pid, Native.SIGKILL);
        foreach (var pid in members) Native.Kill(pid, Native.SIGKILL);
        // Remove the cgroup now rather than after the drain in WaitAsync and Dispose: under load that is a second later.
        _cgroup?.Remove();
        Interrupt.Stopped(Math.Max(count, 1));
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

    /// <summary>Mono's --jitmap and CoreCLR's DOTNET_PerfMapEnabled write /tmp/perf-PID.map.</summary>
    private static bool WritesPerfMap(ProcessSpec spec) =>
        spec.Args.Contains("--jitmap") || spec.Env?.ContainsKey("DOTNET_PerfMapEnabled") == true;

    /// <summary>
    /// What a run with a perf map leaves in /tmp, whatever TMPDIR says: the map, and CoreCLR 8's perfinfo-PID.map
    /// (written even in map-only mode). The first is the map.
    /// </summary>
    public static IReadOnlyList<string> PerfMapFiles(int pid) => [$"/tmp/perf-{pid}.map", $"/tmp/perfinfo-{pid}.map"];

    private void OnLine(string? line, bool stderr)
    {
        if (line is null) return;
        var t = Elapsed;
        lock (_out)
        {
            if (_closed) return;
            (stderr ? _errFile : _outFile).WriteLine(line);
            var sb = stderr ? _err : _out;
            if (sb.Length < MaxKeptChars) sb.AppendLine(line);
        }
        Line?.Invoke(line, stderr, t);
    }

    /// <summary>The run's memory now: its cgroup's usage, or the session's RSS without one.</summary>
    public long MemoryNow() => _cgroup?.UsageBytes() ?? SessionRss(Pid);

    private long SampleMemory()
    {
        var bytes = _job?.CommitBytes() ?? _cgroup?.UsageBytes() ?? SessionRss(Pid);
        if (bytes > _peak) _peak = bytes;
        lock (_memory) _memory.Add(new MemorySample(Math.Round(Elapsed, 3), bytes));
        return bytes;
    }

    private static int SessionMembers(int sid) => ForSession(sid).Count();

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

    /// <summary>Sum of RSS over the session, for machines without a memory cgroup.</summary>
    internal static long SessionRss(int sid)
    {
        long total = 0;
        // fields[21] is RSS in pages.
        foreach (var fields in ForSession(sid))
            if (long.TryParse(fields[21], out var pages)) total += pages * Environment.SystemPageSize;
        return total;
    }

    public async Task<RunResult> WaitAsync(CancellationToken cancel = default)
    {
        var exited = _job?.WaitForExitAsync() ?? _process.WaitForExitAsync(CancellationToken.None);
        // The run is its program. WaitForExitAsync also waits for EOF on the output pipes, which a process the program
        // started may hold past its exit (a Wine program's explorer.exe held them for a whole timeout): once the
        // program has exited, stop waiting; the kill below ends whatever still holds them, and the drain reads the rest.
        while (!exited.IsCompleted && !(_job is null && _process.HasExited))
        {
            var used = SampleMemory();
            if (Elapsed > _spec.Timeout.TotalSeconds) { _timedOut = true; KillTree(); }
            else if (_job is null && _cgroup is null && used > _spec.MemoryBytes) { _memoryCapped = true; KillTree(); }
            // The kernel refused memory to a job member: end the run, as the cgroup's OOM kill does on Linux.
            else if (_job?.MemoryLimitHit == true) { _memoryCapped = true; KillTree(); }
            else if (cancel.IsCancellationRequested) KillTree();
            else if (Interrupt.IsRequested)
            {
                StopForInterrupt();
                KillTree();
            }
            // The interrupt token ends the wait at once, so a Ctrl-C does not wait for the next sample.
            await Task.WhenAny(exited, Task.Delay(100, Interrupt.Token));
        }
        var wall = Elapsed;
        SampleMemory();
        if (_cgroup is not null)
        {
            _peak = Math.Max(_peak, _cgroup.PeakBytes());
            if (_cgroup.OomKilled()) _memoryCapped = true;
        }
        int? code;
        string? signal = null;
        if (_job is not null)
        {
            _peak = Math.Max(_peak, (long)_job.Limits().PeakJobMemoryUsed);
            if (_job.MemoryLimitHit) _memoryCapped = true;
            KillTree();
            _job.DrainOutput(TimeSpan.FromSeconds(10));
            (code, signal) = WindowsExit.Describe(_job.ExitCode);
        }
        else
        {
            KillTree();                      // leftovers holding our pipes would block the drain below
            _process.WaitForExit();
            code = _process.ExitCode;
            // .NET reports a death by signal as 128 + signal number.
            if (code is > 128 and < 128 + 32) { signal = Native.SignalName(code.Value - 128); code = null; }
        }
        string stdout, stderr;
        lock (_out) { stdout = _out.ToString(); stderr = _err.ToString(); }
        if (_interrupted) throw new OperationCanceledException($"interrupted by {Interrupt.SignalName}", Interrupt.Token);
        List<MemorySample> samples;
        lock (_memory) samples = [.. _memory];
        return new RunResult(code, signal, _timedOut, _memoryCapped, Math.Round(wall, 4), _peak, stdout, stderr,
                             _spec.StdoutFile, _spec.StderrFile, _containment, samples);
    }

    public void Signal(int signal)
    {
        if (_job is not null) throw new PlatformNotSupportedException("signals are POSIX; a Windows run has none");
        Native.Kill(Pid, signal);
    }

    public void KillTree()
    {
        if (_job is not null)
        {
            _job.KillTree();
            return;
        }
        Native.Kill(-Pid, Native.SIGKILL);
        _cgroup?.KillAll(TimeSpan.FromSeconds(5));
    }

    public void Dispose()
    {
        _onInterrupt.Dispose();
        KillTree();
        _cgroup?.Dispose();
        if (_interrupted && _cgroup is not null && !Directory.Exists(_cgroup.Dir)) Interrupt.CgroupRemoved();
        Forget();
        _job?.Dispose();
        _process?.Dispose();
        lock (_out)
        {
            _closed = true;
            _outFile.Dispose();
            _errFile.Dispose();
        }
    }
}
