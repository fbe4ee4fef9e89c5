using System.Diagnostics;
using System.Text;

namespace Corpus.Harness.Containment;

/// <param name="CoreDumps">Lift the core size limit so a crash leaves a core in WorkDir (with core_pattern "core").</param>
/// <param name="PerfMap">The launch asked the runtime for a perf map (/tmp/perf-PID.map): the ledger records it, so a
/// killed harness's map is removed too. Which flag asks for it is the subject kind's business.</param>
/// <param name="CpuTimeout">The budget on the CPU clock: the run ends once its processes have used this much CPU, and
/// <paramref name="Timeout"/> is its wall cap; a run that reaches the wall cap first was starved by the host.</param>
public sealed record ProcessSpec(
    string FileName, IReadOnlyList<string> Args, string WorkDir, string StdoutFile, string StderrFile,
    TimeSpan Timeout, long MemoryBytes, IReadOnlyDictionary<string, string>? Env = null, bool CoreDumps = false,
    bool PerfMap = false, TimeSpan? CpuTimeout = null);

public sealed record MemorySample(double Seconds, long Bytes);

public sealed record RunResult(
    int? ExitCode, string? Signal, bool TimedOut, bool MemoryCapped, double WallSeconds, long PeakBytes,
    string Stdout, string Stderr, string StdoutFile, string StderrFile, string Containment,
    IReadOnlyList<MemorySample> Memory)
{
    /// <summary>The run's start on Stopwatch's clock in seconds (<see cref="ContainedProcess.StartedMonotonic"/>); 0 when unknown.</summary>
    public double StartedMonotonic { get; init; }

    /// <summary>A run on the CPU clock: its budget in CPU seconds (<see cref="ProcessSpec.CpuTimeout"/>); null on the wall clock.</summary>
    public double? CpuBudget { get; init; }
    /// <summary>A run on the CPU clock: the CPU seconds all its processes used, ended ones included.</summary>
    public double? CpuSeconds { get; init; }
    /// <summary>A run on the CPU clock reached its wall cap before its CPU budget: the host starved it, and it showed neither
    /// an end nor the budget spent.</summary>
    public bool Starved { get; init; }

    /// <summary>The run's time on its budget's clock: CPU seconds on the CPU clock, else wall seconds.</summary>
    public double ClockSeconds => CpuBudget is not null && CpuSeconds is { } cpu ? cpu : WallSeconds;

    /// <summary>The harness ended the run: its time (or CPU) budget, its memory cap, or its wall cap when starved.</summary>
    public bool Stopped => TimedOut || MemoryCapped || Starved;

    /// <summary>The program ended by itself with exit code 0.</summary>
    public bool ExitedZero => !Stopped && Signal is null && ExitCode == 0;

    /// <summary>How the run ended, as the records say it: "exit N", a signal's name, "timeout", "memory-cap" or "starved".</summary>
    public string Status => TimedOut ? "timeout" : MemoryCapped ? "memory-cap" : Starved ? "starved"
        : Signal is not null ? Signal : $"exit {ExitCode}";
}

/// <summary>
/// Runs one process under a memory cap, a wall-clock cap and a whole-tree kill. The operating system's half is a
/// session: on Linux the process leads its own session (setsid) and sits in its own memory cgroup when the machine has
/// one (<see cref="CgroupSession"/>); on Windows it runs in its own Job Object (<see cref="WindowsJob"/>). Either way
/// nothing it started survives the run. This class keeps what both share: output, clock, memory samples, caps.
/// </summary>
public sealed class ContainedProcess : IDisposable
{
    private const int MaxKeptChars = 16 << 20;

    private readonly ProcessSpec _spec;
    private readonly IRunSession _session;
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly StringBuilder _out = new(), _err = new();
    private readonly StreamWriter _outFile, _errFile;
    private volatile IOException? _diskFull;
    private readonly List<MemorySample> _memory = [];
    private long _peak;
    private volatile bool _timedOut, _memoryCapped, _starved, _interrupted;
    private bool _closed;
    private CancellationTokenRegistration _onInterrupt;
    private int _stoppedCount;

    /// <summary>Every output line as it arrives: (line, isStderr, seconds since start).</summary>
    public event Action<string, bool, double>? Line;

    public int Pid => _session.Pid;
    /// <summary>The run's own memory cgroup, or null where the machine has none (and on Windows): what the cell is charged for.</summary>
    public MemoryCgroup? Cgroup => (_session as CgroupSession)?.Cgroup;
    public double Elapsed => _clock.Elapsed.TotalSeconds;
    /// <summary>On the CPU clock (<see cref="ProcessSpec.CpuTimeout"/>): the run's budget is CPU, so its timed captures wait on it too.</summary>
    public bool OnCpuClock => _spec.CpuTimeout is not null;
    /// <summary>The run's own clock: the CPU seconds its processes have used on the CPU clock (the wall clock when they
    /// cannot be counted), else the wall clock since the start.</summary>
    public double ClockNow => OnCpuClock && _session.CpuSeconds() is { } cpu ? cpu : Elapsed;
    /// <summary>The run's start on Stopwatch's clock, in seconds (CLOCK_MONOTONIC on Linux): where a trace tool's timestamps
    /// on that clock (perf -k CLOCK_MONOTONIC, Wine's +timestamp) become seconds of the run, as <see cref="Elapsed"/> is.</summary>
    public double StartedMonotonic => (double)_started / Stopwatch.Frequency;
    /// <summary>Windows: the pids in the run's Job Object now; null on Linux.</summary>
    public IReadOnlyList<int>? JobMembers => (_session as WindowsJob)?.Members();
    /// <summary>Windows: the memory limits the Job Object holds, as the kernel reads them back; null on Linux.</summary>
    public (long Process, long Job)? JobMemoryLimits =>
        (_session as WindowsJob)?.Limits() is { } l ? ((long)l.ProcessMemoryLimit, (long)l.JobMemoryLimit) : null;
    public bool HasExited => _session.HasExited;

    /// <exception cref="OperationCanceledException">The harness was interrupted (SIGINT/SIGTERM): no new run starts.</exception>
    /// <param name="onLine">Subscribed to <see cref="Line"/> before any output is read, so no early line is missed.</param>
    public ContainedProcess(ProcessSpec spec, Action<string, bool, double>? onLine = null)
    {
        Line += onLine;
        Interrupt.ThrowIfRequested();
        _spec = spec;
        Directory.CreateDirectory(Path.GetDirectoryName(spec.StdoutFile)!);
        _outFile = new StreamWriter(spec.StdoutFile) { AutoFlush = true };
        _errFile = new StreamWriter(spec.StderrFile) { AutoFlush = true };
        try { _session = IHost.Current.Session(spec, OnLine); }
        catch
        {
            _outFile.Dispose();
            _errFile.Dispose();
            throw;
        }
        // Kill at once, on the signal's own thread; WaitAsync then finishes the kill and reports.
        _onInterrupt = Interrupt.Token.Register(StopForInterrupt);
        (_session as CgroupSession)?.BeginOutput();
    }

    private void StopForInterrupt()
    {
        if (Interlocked.Exchange(ref _stoppedCount, 1) == 1) return;
        _interrupted = true;
        Interrupt.Stopped(Math.Max(_session.Stop(), 1));
    }

    /// <summary>
    /// What a run with a perf map leaves in /tmp, whatever TMPDIR says: perf's /tmp/perf-PID.map, and the
    /// /tmp/perfinfo-PID.map some runtimes write beside it. The first is the map.
    /// </summary>
    public static IReadOnlyList<string> PerfMapFiles(int pid) => [$"/tmp/perf-{pid}.map", $"/tmp/perfinfo-{pid}.map"];

    private void OnLine(string? line, bool stderr)
    {
        if (line is null) return;
        var t = Elapsed;
        lock (_out)
        {
            if (_closed) return;
            // A full disk ends the run (the wait loop kills it) and then the harness's run: see Disk.
            if (_diskFull is null)
                try { (stderr ? _errFile : _outFile).WriteLine(line); }
                catch (IOException e) when (Disk.IsFull(e)) { _diskFull = e; }
            var sb = stderr ? _err : _out;
            if (sb.Length < MaxKeptChars) sb.AppendLine(line);
        }
        Line?.Invoke(line, stderr, t);
    }

    /// <summary>
    /// The run's memory now: its cgroup's usage or, without one, the session's RSS (Linux); the commit of the Job
    /// Object's processes (Windows).
    /// </summary>
    public long MemoryNow() => _session.MemoryNow();

    private long SampleMemory()
    {
        var bytes = _session.MemoryNow();
        if (bytes > _peak) _peak = bytes;
        lock (_memory) _memory.Add(new MemorySample(Math.Round(Elapsed, 3), bytes));
        return bytes;
    }

    public async Task<RunResult> WaitAsync(CancellationToken cancel = default)
    {
        var exited = _session.WaitForExitAsync();
        // The run is its program. Linux's wait also waits for EOF on the output pipes, which a process the program
        // started may hold past its exit (a Wine program's explorer.exe held them for a whole timeout): once the
        // program has exited, stop waiting; the kill below ends whatever still holds them, and the drain reads the rest.
        while (!exited.IsCompleted && !_session.HasExited)
        {
            var used = SampleMemory();
            var cpu = _spec.CpuTimeout is null ? null : _session.CpuSeconds();
            if (cpu >= _spec.CpuTimeout?.TotalSeconds) { _timedOut = true; KillTree(); }
            // Without a count of its CPU, a run on the CPU clock has its wall cap for budget.
            else if (Elapsed > _spec.Timeout.TotalSeconds) { if (cpu is null) _timedOut = true; else _starved = true; KillTree(); }
            else if (_session.OverMemoryCap(used)) { _memoryCapped = true; KillTree(); }
            else if (cancel.IsCancellationRequested || _diskFull is not null) KillTree();
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
        var end = _session.Finish();
        // The budget was spent between the last look and the wall cap's kill: the run did use it all without an end.
        if (_starved && end.CpuSeconds >= _spec.CpuTimeout?.TotalSeconds) (_starved, _timedOut) = (false, true);
        _peak = Math.Max(_peak, end.PeakBytes);
        if (end.MemoryCapped) _memoryCapped = true;
        string stdout, stderr;
        lock (_out) { stdout = _out.ToString(); stderr = _err.ToString(); }
        if (_interrupted) throw new OperationCanceledException($"interrupted by {Interrupt.SignalName}", Interrupt.Token);
        if (_diskFull is { } full) System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(full);
        List<MemorySample> samples;
        lock (_memory) samples = [.. _memory];
        return new RunResult(end.ExitCode, end.Signal, _timedOut, _memoryCapped, Math.Round(wall, 4), _peak, stdout, stderr,
                             _spec.StdoutFile, _spec.StderrFile, Containment, samples)
        {
            StartedMonotonic = StartedMonotonic, CpuBudget = _spec.CpuTimeout?.TotalSeconds,
            CpuSeconds = end.CpuSeconds is { } c ? Math.Round(c, 3) : null, Starved = _starved,
        };
    }

    private string Containment => _spec.CpuTimeout is { } cpu
        ? $"{_session.Containment} (the wall cap), the budget {cpu.TotalSeconds:0.##} s of CPU"
        : _session.Containment;

    public void Signal(int signal)
    {
        if (_session is not CgroupSession linux) throw new PlatformNotSupportedException("signals are POSIX; a Windows run has none");
        linux.Signal(signal);
    }

    public void KillTree() => _session.KillTree();

    public void Dispose()
    {
        _onInterrupt.Dispose();
        var cgroup = Cgroup;
        _session.Dispose();
        if (_interrupted && cgroup is not null && !Directory.Exists(cgroup.Dir)) Interrupt.CgroupRemoved();
        lock (_out)
        {
            _closed = true;
            // A line the full disk refused is still in the writer's buffer, and closing would try it again.
            try { _outFile.Dispose(); } catch (IOException e) when (Disk.IsFull(e)) { }
            try { _errFile.Dispose(); } catch (IOException e) when (Disk.IsFull(e)) { }
        }
    }
}
