using System.Globalization;
using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Runner.Phases;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <summary>
/// The runs of one cell: launches its program on the subject inside containment, with the cell's isolation, the
/// case's timed captures beside it (<see cref="TimedCaptures"/>), the operating system's side of a run
/// (<see cref="IRunPlatform"/>), and its METRIC and marker lines read back. The traced run and time travel are phases
/// of their own (<see cref="TracedRun"/>, <see cref="TimeTravelRun"/>) that launch through it.
/// </summary>
public sealed class RunLauncher : IRunLauncher
{
    public const string MarkerPrefix = "REPRO-REACHED ";

    private readonly RunOptions _options;
    private readonly string _program;
    private readonly CellIsolation _isolation;
    private readonly CellResult _cell;
    private readonly IRunPlatform _platform;
    private readonly TimedCaptures _timed;
    private readonly TracedRun _traced;
    private readonly TimeTravelRun _timeTravel;

    public RunLauncher(RunOptions options, IToolRunner tools, Manifest manifest, CaseSpec cs, string variant, Subject subject,
                       string program, CellIsolation isolation, ICaptureBackend backend, CellResult cell, string dir,
                       IReadOnlyList<ITraceAnalyser>? analysers = null)
    {
        (_options, _program, _isolation, _cell) = (options, program, isolation, cell);
        (Manifest, Case, Variant, Subject, Dir) = (manifest, cs, variant, subject, dir);
        _platform = IRunPlatform.For(options.Root, tools, cs, subject, program, cell);
        _timed = new TimedCaptures(backend, tools, dir);
        _traced = new TracedRun(this, tools, options.Root, cell, analysers ?? []);
        _timeTravel = new TimeTravelRun(this, options.Root);
    }

    public Manifest Manifest { get; }
    public CaseSpec Case { get; }
    public string Variant { get; }
    public Subject Subject { get; }
    public string Dir { get; }
    public int? ForceRuns => _options.ForceRuns;

    public IReadOnlyDictionary<string, string> Env
    {
        get
        {
            var env = new Dictionary<string, string>(Case.Env);
            foreach (var kv in _options.Env ?? new Dictionary<string, string>()) env[kv.Key] = kv.Value;
            return env;
        }
    }
    public void Progress(string message) => _options.Progress(message);

    private string FreelogLibrary => Path.Combine(_options.Root, "build", "harness", "freelog.so");

    internal Launch Command(long? n)
    {
        var args = Case.Args.Select(a => a.Replace("{variant}", Variant)
                                          .Replace("{n}", n?.ToString(CultureInfo.InvariantCulture) ?? "{n}")).ToList();
        var env = new Dictionary<string, string>(Env);
        foreach (var kv in _isolation.Env) env[kv.Key] = kv.Value;
        var freelog = Case.Crash is { Freelog: true };
        if (freelog) env["LD_PRELOAD"] = FreelogLibrary;
        return Subject.Kind.Launch(Subject, _program, args, new LaunchOptions(env, PerfMap: freelog, Display: Case.Display));
    }

    public Task<RunOutput> ExecuteAsync(long? n, string label, TimedCapture? timed,
                                        Func<ContainedProcess, Task>? alongside = null, Action<RunResult>? exited = null,
                                        bool untilCaptured = false) =>
        RunAsync(n, label, timed, alongside, exited, untilCaptured);

    public async Task<TraceRecord?> TraceAsync(TraceCapture trace, long? n, int attempt = 1)
    {
        var traced = await _traced.RunAsync(trace, n, attempt);
        _cell.Record(traced.Record, traced.Model, traced.Findings);
        return traced.Unavailable ? null : traced.Record;
    }

    public async Task<(RunResult Run, string StdoutFile)> RecordAsync(TimeTravelCapture tt)
    {
        var (run, stdout, findings) = await _timeTravel.RunAsync(tt);
        _cell.Record(null, findings);
        return (run, stdout);
    }

    /// <summary>How often a run that never reached the program is started, in all.</summary>
    public const int LaunchAttempts = 3;

    /// <summary>
    /// One run of the program. A run that never reached it (its launcher said so, or it ended without the case's
    /// start marker) is an infrastructure fault, not a run: its files are kept as attempt N, the cell records it, and
    /// it is started again, at most <see cref="LaunchAttempts"/> times in all; then the cell is an error naming why.
    /// The run that reached the program is recorded in the cell with what its phases found, in one step; of an attempt
    /// that did not, only what it said.
    /// </summary>
    /// <param name="wrap">A trace backend's change to the command (a tool around it, its environment).</param>
    /// <param name="timeout">The run's cap when not the case's budget (a traced run).</param>
    internal async Task<RunOutput> RunAsync(long? n, string label, TimedCapture? timed = null, Func<ContainedProcess, Task>? alongside = null,
                                            Action<RunResult>? exited = null, bool untilCaptured = false,
                                            Func<Launch, Launch>? wrap = null, TimeSpan? timeout = null)
    {
        var retries = new RunFindings();
        for (var attempt = 1; ; attempt++)
        {
            var (output, workDir, found) = await RunOnceAsync(n, label, timed, alongside, exited, untilCaptured, wrap, timeout);
            var run = output.Run;
            var never = LaunchFailedException.Said(run.Stderr) ?? NotStarted(run);
            if (never is null)
            {
                _cell.Record(new RunSummary(label, run.Status, run.WallSeconds, run.PeakBytes, output.Metrics, run.Containment)
                             { CaptureOnly = untilCaptured || wrap is not null, N = n, ExitedZero = run.ExitedZero, CpuSeconds = run.CpuSeconds },
                             retries.With(found));
                if (ProgramUnsupportedException.Said(run.Stdout) is { } reason) throw new ProgramUnsupportedException(reason, label, run.Status);
                return output;
            }
            var kept = KeepAttempt(workDir, label, attempt);
            var said = $"{label}: attempt {attempt} of {LaunchAttempts} never reached the program: {never} ({run.Status} in {run.WallSeconds:0.00} s"
                       + $"{(string.IsNullOrWhiteSpace(run.Stderr) ? ", nothing on stderr" : $"; stderr: {ProcessMatch.Tail(run)}")}; kept as {kept})"
                       + (_isolation.StateAfterLaunchFailure() is { } state ? $"; {state}" : "");
            retries.LaunchRetries.Add(said);
            Progress($"{_cell.Key} {said}");
            if (attempt == LaunchAttempts)
            {
                _cell.Record(null, retries);
                throw new LaunchFailedException($"{never}, {LaunchAttempts} times", label, run.Status);
            }
        }
    }

    /// <summary>Why the run did not reach the program, by the case's start marker: null when it printed it, or the case
    /// names none, or the run was stopped (a timed-out or starved run is a run).</summary>
    private string? NotStarted(RunResult run) =>
        Case.StartMarker is { } marker && !run.Stopped && !run.Stdout.Contains(marker, StringComparison.Ordinal)
            ? $"it ended without the program's start line '{marker}'" : null;

    /// <summary>Renames the attempt's files (its folder, for a crash capture) so the next attempt starts clean.</summary>
    private string KeepAttempt(string workDir, string label, int attempt)
    {
        var suffix = $".attempt{attempt}";
        if (workDir != Dir)
        {
            Directory.Move(workDir, workDir + suffix);
            return Path.GetFileName(workDir) + suffix + "/";
        }
        foreach (var ext in new[] { "stdout", "stderr" })
        {
            var file = Path.Combine(workDir, $"{label}.{ext}");
            if (File.Exists(file)) File.Move(file, Path.Combine(workDir, $"{label}{suffix}.{ext}"), overwrite: true);
        }
        return $"{label}{suffix}.stdout/.stderr";
    }

    private async Task<(RunOutput Output, string WorkDir, RunFindings Found)> RunOnceAsync(long? n, string label, TimedCapture? timed, Func<ContainedProcess, Task>? alongside,
                                                                      Action<RunResult>? exited, bool untilCaptured,
                                                                      Func<Launch, Launch>? wrap, TimeSpan? timeout)
    {
        var cs = Case;
        var launch = Command(n);
        if (wrap is not null) launch = wrap(launch);
        // A crash capture gets a folder per run: the kernel writes "core" into the working directory.
        var workDir = cs.Crash is null ? Dir : Path.Combine(Dir, label);
        Directory.CreateDirectory(workDir);
        var found = new RunFindings();
        (launch, var unwrapped) = _platform.Wrap(launch, workDir, label);
        if (unwrapped is not null) found.CaptureErrors.Add(unwrapped);
        var budget = TimeSpan.FromSeconds(cs.Budget.TimeoutSec);
        var cpuClock = timeout is null && cs.Budget.CpuClock;
        var spec = new ProcessSpec(launch.File, launch.Args, workDir, Path.Combine(workDir, $"{label}.stdout"),
                                   Path.Combine(workDir, $"{label}.stderr"), timeout ?? (cpuClock ? budget * Budget.StarvedWallFactor : budget),
                                   (long)cs.Budget.MemoryMB << 20, launch.Env, CoreDumps: cs.Crash?.Core ?? false,
                                   PerfMap: cs.Crash is { Freelog: true }, CpuTimeout: cpuClock ? budget : null);
        using var scope = _platform.Begin();
        var markers = new Dictionary<string, double>();
        var trigger = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        // Subscribed before the first line is read: a fast program prints its markers at once.
        void OnLine(string line, bool stderr, double t)
        {
            var at = line.IndexOf(MarkerPrefix, StringComparison.Ordinal);
            if (at >= 0) lock (markers) markers.TryAdd(line[at..].Trim(), t);
            if (timed is not null && line.Contains(timed.Marker)) trigger.TrySetResult();
        }
        using var p = new ContainedProcess(spec, OnLine);
        scope.Started(p.Pid);
        var captureTask = timed is null ? null : _timed.Start(p, trigger.Task, timed, label);
        var side = alongside?.Invoke(p);
        var captured = new CancellationTokenSource();
        if (untilCaptured && captureTask is not null) _ = captureTask.ContinueWith(_ => captured.Cancel(), TaskScheduler.Default);
        var run = await p.WaitAsync(captured.Token);
        if (captureTask is not null) found.With(await captureTask);
        if (side is not null) await side;
        exited?.Invoke(run);
        found.With(_platform.Collect(run, p.Pid, workDir, label));
        var metrics = ProgramMetrics.Parse(run.Stdout, e => found.CaptureErrors.Add($"{label}: {e}"));
        lock (markers) return (new RunOutput(run, metrics, new Dictionary<string, double>(markers)), workDir, found);
    }

    public void DeleteRun(RunResult run, string label)
    {
        try
        {
            if (Case.Crash is not null) Directory.Delete(Path.Combine(Dir, label), recursive: true);
            else
            {
                File.Delete(run.StdoutFile);
                File.Delete(run.StderrFile);
            }
        }
        catch (IOException) { }
    }
}

/// <summary>
/// A run's program said this subject cannot run it (a line "REPRO-UNSUPPORTED reason" on stdout: an API the runtime
/// removed or never had). The cell ends unsupported with that reason, whatever its family, and runs nothing more.
/// </summary>
public sealed class ProgramUnsupportedException(string reason, string label, string status)
    : Exception($"{reason} ({label}: {status})")
{
    public const string Marker = "REPRO-UNSUPPORTED";
    public string Reason => reason;

    /// <summary>The reason of the first such line, or null; only at the start of a line, so quoting the marker is not saying it.</summary>
    public static string? Said(string stdout)
    {
        foreach (var line in stdout.Split('\n'))
            if (line.StartsWith(Marker, StringComparison.Ordinal) && (line.Length == Marker.Length || char.IsWhiteSpace(line[Marker.Length])))
                return line[Marker.Length..].Trim() is { Length: > 0 } r ? r : "the program gave no reason";
        return null;
    }
}

