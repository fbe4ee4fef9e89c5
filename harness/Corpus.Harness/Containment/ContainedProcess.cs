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
/// Runs one process under a memory cap, a wall-clock cap and a whole-tree kill. The process leads its own
/// session (setsid) and sits in its own memory cgroup when the machine has one; either way nothing it
/// started survives the run.
/// </summary>
public sealed class ContainedProcess : IDisposable
{
    private const int MaxKeptChars = 16 << 20;
    private static int _sequence;

    private readonly ProcessSpec _spec;
    private readonly Process _process;
    private readonly MemoryCgroup? _cgroup;
    private readonly string _containment;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly StringBuilder _out = new(), _err = new();
    private readonly StreamWriter _outFile, _errFile;
    private readonly List<MemorySample> _memory = [];
    private long _peak;
    private volatile bool _timedOut, _memoryCapped;
    private bool _closed;

    /// <summary>Every output line as it arrives: (line, isStderr, seconds since start).</summary>
    public event Action<string, bool, double>? Line;

    public int Pid { get; }
    /// <summary>The run's own memory cgroup, or null where the machine has none: what the cell is charged for.</summary>
    public MemoryCgroup? Cgroup => _cgroup;
    public double Elapsed => _clock.Elapsed.TotalSeconds;
    public bool HasExited => _process.HasExited;

    public ContainedProcess(ProcessSpec spec)
    {
        _spec = spec;
        var name = $"{Environment.ProcessId}-{Interlocked.Increment(ref _sequence)}";
        _cgroup = MemoryCgroup.TryCreate(name, spec.MemoryBytes, out var why);
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
            _outFile.Dispose();
            _errFile.Dispose();
            throw;
        }
        _process.StandardInput.Close();
        Pid = _process.Id;
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

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

    private long SampleMemory()
    {
        var bytes = _cgroup?.UsageBytes() ?? SessionRss(Pid);
        if (bytes > _peak) _peak = bytes;
        lock (_memory) _memory.Add(new MemorySample(Math.Round(Elapsed, 3), bytes));
        return bytes;
    }

    /// <summary>Sum of RSS over the session, for machines without a memory cgroup.</summary>
    internal static long SessionRss(int sid)
    {
        long total = 0;
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out _)) continue;
            try
            {
                var stat = File.ReadAllText(Path.Combine(dir, "stat"));
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                // fields[3] is the session id; fields[21] is RSS in pages.
                if (int.Parse(fields[3]) == sid) total += long.Parse(fields[21]) * Environment.SystemPageSize;
            }
            catch (Exception e) when (e is IOException or FormatException or IndexOutOfRangeException or UnauthorizedAccessException) { }
        }
        return total;
    }

    public async Task<RunResult> WaitAsync(CancellationToken cancel = default)
    {
        var exited = _process.WaitForExitAsync(CancellationToken.None);
        while (!exited.IsCompleted)
        {
            var used = SampleMemory();
            if (Elapsed > _spec.Timeout.TotalSeconds) { _timedOut = true; KillTree(); }
            else if (_cgroup is null && used > _spec.MemoryBytes) { _memoryCapped = true; KillTree(); }
            else if (cancel.IsCancellationRequested) KillTree();
            await Task.WhenAny(exited, Task.Delay(100, CancellationToken.None));
        }
        var wall = Elapsed;
        SampleMemory();
        if (_cgroup is not null)
        {
            _peak = Math.Max(_peak, _cgroup.PeakBytes());
            if (_cgroup.OomKilled()) _memoryCapped = true;
        }
        KillTree();                      // leftovers holding our pipes would block the drain below
        _process.WaitForExit();
        int? code = _process.ExitCode;
        string? signal = null;
        // .NET reports a death by signal as 128 + signal number.
        if (code is > 128 and < 128 + 32) { signal = Native.SignalName(code.Value - 128); code = null; }
        string stdout, stderr;
        lock (_out) { stdout = _out.ToString(); stderr = _err.ToString(); }
        List<MemorySample> samples;
        lock (_memory) samples = [.. _memory];
        return new RunResult(code, signal, _timedOut, _memoryCapped, Math.Round(wall, 4), _peak, stdout, stderr,
                             _spec.StdoutFile, _spec.StderrFile, _containment, samples);
    }

    public void Signal(int signal) => Native.Kill(Pid, signal);

    public void KillTree()
    {
        Native.Kill(-Pid, Native.SIGKILL);
        _cgroup?.KillAll(TimeSpan.FromSeconds(5));
    }

    public void Dispose()
    {
        KillTree();
        _cgroup?.Dispose();
        _process.Dispose();
        lock (_out)
        {
            _closed = true;
            _outFile.Dispose();
            _errFile.Dispose();
        }
    }
}
