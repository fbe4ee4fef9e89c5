using System.Globalization;
using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner;

/// <summary>
/// The runs of one cell: launches its program on the subject inside containment, with the cell's isolation,
/// the case's captures (timed snapshots, crash cores) and its METRIC and marker lines read back.
/// </summary>
public sealed class RunLauncher(RunOptions options, IToolRunner tools, Manifest manifest, CaseSpec cs, string variant,
                             Subject subject, string program, CellIsolation isolation, ICaptureBackend backend,
                             CellResult cell, string dir) : IRunLauncher
{
    public const string MetricPrefix = "METRIC ";
    public const string MarkerPrefix = "REPRO-REACHED ";

    /// <summary>Snapshot files are numbered across the cell's runs, so a sweep that captures in several runs keeps each.</summary>
    private int _snapshots;

    public Manifest Manifest => manifest;
    public CaseSpec Case => cs;
    public string Variant => variant;
    public Subject Subject => subject;
    public string Dir => dir;
    public int? ForceRuns => options.ForceRuns;

    public IReadOnlyDictionary<string, string> Env
    {
        get
        {
            var env = new Dictionary<string, string>(cs.Env);
            foreach (var kv in options.Env ?? new Dictionary<string, string>()) env[kv.Key] = kv.Value;
            return env;
        }
    }
    public void Progress(string message) => options.Progress(message);

    private string FreelogLibrary => Path.Combine(options.Root, "build", "harness", "freelog.so");
    private string FreelogScript => Path.Combine(options.Root, "harness", "native", "freelog", "freelog.py");

    internal Launch Command(long? n)
    {
        var args = cs.Args.Select(a => a.Replace("{variant}", variant)
                                        .Replace("{n}", n?.ToString(CultureInfo.InvariantCulture) ?? "{n}")).ToList();
        var env = new Dictionary<string, string>(Env);
        foreach (var kv in isolation.Env) env[kv.Key] = kv.Value;
        var freelog = cs.Crash is { Freelog: true };
        if (freelog) env["LD_PRELOAD"] = FreelogLibrary;
        return subject.Kind.Launch(subject, program, args, new LaunchOptions(env, PerfMap: freelog, Display: cs.Display));
    }

    public Task<RunOutput> ExecuteAsync(long? n, string label, TimedCapture? timed,
                                        Func<ContainedProcess, Task>? alongside = null, Action<RunResult>? exited = null,
                                        bool untilCaptured = false) =>
        RunAsync(n, label, timed, alongside, exited, untilCaptured, null, null);

    /// <param name="wrap">A trace backend's change to the command (a tool around it, its environment).</param>
    /// <param name="timeout">The run's cap when not the case's budget (a traced run).</param>
    private async Task<RunOutput> RunAsync(long? n, string label, TimedCapture? timed, Func<ContainedProcess, Task>? alongside,
                                           Action<RunResult>? exited, bool untilCaptured, Func<Launch, Launch>? wrap, TimeSpan? timeout)
    {
        var launch = Command(n);
        if (wrap is not null) launch = wrap(launch);
        // A crash capture gets a folder per run: the kernel writes "core" into the working directory.
        var workDir = cs.Crash is null ? dir : Path.Combine(dir, label);
        Directory.CreateDirectory(workDir);
        if (OperatingSystem.IsWindows()) launch = WindowsLaunch(launch, workDir, label);
        var spec = new ProcessSpec(launch.File, launch.Args, workDir, Path.Combine(workDir, $"{label}.stdout"),
                                   Path.Combine(workDir, $"{label}.stderr"), timeout ?? TimeSpan.FromSeconds(cs.Budget.TimeoutSec),
                                   (long)cs.Budget.MemoryMB << 20, launch.Env, CoreDumps: cs.Crash?.Core ?? false,
                                   PerfMap: cs.Crash is { Freelog: true });
        // /dev/shm is Linux's; a Windows run's named sections die with its Job Object.
        using var janitor = OperatingSystem.IsWindows() ? null : new ShmJanitor(Path.Combine(options.Root, ".cache", "ledger"));
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
        janitor?.Own(p.Pid);
        Task? captureTask = null;
        if (timed is not null)
        {
            if (backend.Unavailable is { } why) lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{label}: {backend.Name}: {why}");
            else
            {
                captureTask = CaptureSeriesAsync(p, trigger.Task, timed, label, timed.Core ? new LinuxProcDump(tools) : null);
            }
        }
        var side = alongside?.Invoke(p);
        var captured = new CancellationTokenSource();
        if (untilCaptured && captureTask is not null) _ = captureTask.ContinueWith(_ => captured.Cancel(), TaskScheduler.Default);
        var run = await p.WaitAsync(captured.Token);
        if (captureTask is not null) await captureTask;
        if (side is not null) await side;
        exited?.Invoke(run);
        if (OperatingSystem.IsWindows()) CollectWindowsFiles(run, workDir, label);
        else if (cs.Crash is not null) CollectCrash(cs.Crash, p.Pid, run, workDir, label);
        var metrics = new Dictionary<string, double>();
        // Anywhere in the line: Mono's SIGQUIT dump ends without a newline and glues itself to the next line.
        foreach (var line in run.Stdout.Split('\n').Where(l => l.Contains(MetricPrefix)))
        {
            try
            {
                using var doc = JsonDocument.Parse(line[(line.IndexOf(MetricPrefix, StringComparison.Ordinal) + MetricPrefix.Length)..]);
                foreach (var prop in doc.RootElement.EnumerateObject())
                    if (prop.Value.ValueKind == JsonValueKind.Number) metrics[prop.Name] = prop.Value.GetDouble();
            }
            catch (JsonException e) { lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{label}: unreadable METRIC line: {e.Message}"); }
        }
        lock (cell.Runs) cell.Runs.Add(new RunSummary(label, run.Status, run.WallSeconds, run.PeakBytes, metrics, run.Containment) { CaptureOnly = untilCaptured || wrap is not null, N = n });
        if (LaunchFailedException.Said(run.Stderr) is { } stage) throw new LaunchFailedException(stage, label, run.Status);
        if (ProgramUnsupportedException.Said(run.Stdout) is { } reason) throw new ProgramUnsupportedException(reason, label, run.Status);
        lock (markers) return new RunOutput(run, metrics, new Dictionary<string, double>(markers));
    }

    /// <summary>
    /// The trace capture: one run on the subject's trace backend, in the cell's folder (trace/, its private TMPDIR in
    /// trace/tmp, removed after), read into the common model; its speedscope JSON and flame graph beside the cell's
    /// records; its cost against the fastest untraced run of the cell at the same n. A trace that could not be taken
    /// is a capture error and a record with the reason.
    /// </summary>
    private static int s_traceTmps;

    /// <summary>Room left for a socket's file name in the traced run's tmp ("dotnet-diagnostic-PID-TICKS-socket").</summary>
    public const int SocketNameRoom = 56;

    /// <summary>Where a traced run's sockets go: the cell's own tmp, else one named NAME under TMPDIR, else under /tmp.</summary>
    internal static string SocketFolder(string cellTmp, string tempPath, string name)
    {
        if (cellTmp.Length + SocketNameRoom <= 107) return cellTmp;
        var under = Path.Combine(tempPath, name);
        return under.Length + SocketNameRoom <= 107 || OperatingSystem.IsWindows() ? under : Path.Combine("/tmp", name);
    }

    public async Task<TraceRecord?> TraceAsync(TraceCapture trace, long? n)
    {
        var label = n is null ? "trace" : $"trace-n{n}";
        var backend = subject.Kind.TraceBackend(subject, trace, new CaptureContext(tools, options.Root, false));
        TraceRecord Failed(string why, double wall = 0)
        {
            CaptureError($"{label}: {backend.Name}: {why}");
            var failed = new TraceRecord(backend.Name, trace.Kind, label, n, null, 0, 0, 0, wall, null, null, null, null, null, why);
            lock (cell.Traces) cell.Traces.Add(failed);
            return failed;
        }
        if (backend.Unavailable is { } unavailable) return Failed(unavailable);
        var work = Path.Combine(dir, "trace");
        var tmp = Path.Combine(work, "tmp");
        // A Unix socket's path has at most 107 bytes: the runtime's and dotnet-trace's sockets (about 50 bytes of name)
        // in a deep cell folder would not fit, so such a cell's private tmp is a short one under the harness's TMPDIR.
        // A checkout deep enough puts even that over (a lab's fresh clone: 114 bytes), and then it is /tmp, with a
        // ledgered teardown so that a killed harness leaves nothing there.
        tmp = SocketFolder(tmp, Path.GetTempPath(), $"corpus-trace-{Environment.ProcessId}-{Interlocked.Increment(ref s_traceTmps)}");
        var teardown = tmp.StartsWith("/tmp/corpus-trace-", StringComparison.Ordinal) ? Supervisor.AddTeardown("rm", "-rf", "--", tmp) : null;
        Directory.CreateDirectory(work);
        Directory.CreateDirectory(tmp);
        var run = new TraceRun(trace, work, tmp, label, tools, options.Root);
        Progress($"{cell.Key} {label}: {backend.Name} ({trace.Kind}) …");
        RunOutput output;
        try
        {
            output = await RunAsync(n, label, null, null, null, false,
                                    l => backend.Wrap(l with { Env = new Dictionary<string, string>(l.Env) { ["TMPDIR"] = tmp } }, run),
                                    trace.TimeoutSec is { } t ? TimeSpan.FromSeconds(t) : null);
        }
        finally
        {
            try { Directory.Delete(tmp, recursive: true); } catch (IOException) { } catch (UnauthorizedAccessException) { }
            if (teardown is not null) Supervisor.Remove(teardown);
        }
        var clock = System.Diagnostics.Stopwatch.StartNew();
        TraceModel model;
        try { model = await backend.ReadAsync(run with { Markers = output.Markers }, output.Run, CancellationToken.None); }
        catch (Exception e) when (e is TraceException or IOException or InvalidOperationException or JsonException or FormatException)
        {
            return Failed($"the trace of {label} ({output.Run.Status}) could not be read: {e.Message}", output.Run.WallSeconds);
        }
        (string Speedscope, string Html)? pictures = model.Samples.Count == 0 ? null : TracePictures.Write(model, dir, label, $"{cell.Key} on {subject.Name}");
        var untraced = cell.Runs.Where(r => r.N == n && !r.CaptureOnly && r.Status == "exit 0").ToList();
        double? Ratio(double traced, double? plain) => plain is > 0 ? Math.Round(traced / plain.Value, 3) : null;
        // A snapshot stops the process while it is written: the untraced run's time without those pauses.
        double Paused(string runLabel)
        {
            lock (cell.Captures) return cell.Captures.Where(c => c.Run == runLabel).Sum(c => c.Seconds);
        }
        double? baseWall = untraced.Count == 0 ? null : untraced.Min(r => r.WallSeconds - Paused(r.Label));
        double? metricRatio = null;
        if (cell.SeriesMetric is { } metric && output.Metrics.TryGetValue(metric, out var tracedMetric))
        {
            // The family's own point at this size (the fastest run, pauses taken off), else the fastest run's metric.
            var plain = cell.Series.FirstOrDefault(p => p.X == n)?.Y
                        ?? untraced.Where(r => r.Metrics.ContainsKey(metric)).Select(r => r.Metrics[metric] - Paused(r.Label)).DefaultIfEmpty(0).Min();
            metricRatio = Ratio(tracedMetric, plain);
        }
        var files = model.Files.Concat(pictures is null ? [] : new[] { pictures.Value.Speedscope, pictures.Value.Html }).Where(File.Exists).ToList();
        var record = new TraceRecord(backend.Name, trace.Kind, label, n, model.Files.FirstOrDefault(), files.Sum(f => new FileInfo(f).Length),
                                     model.Samples.Count, model.Events.Count, output.Run.WallSeconds, baseWall,
                                     baseWall is null ? null : Ratio(output.Run.WallSeconds, baseWall), metricRatio,
                                     pictures?.Speedscope, pictures?.Html)
                     { Note = model.Note, ReadSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2) };
        lock (cell.Traces) cell.Traces.Add(record);
        cell.Trace = model;
        return record;
    }

    /// <summary>
    /// Time travel: the case's program once more under gdb's process record, driven by the repro's script, whose
    /// output must show the capture's pattern. The script and its output stay in time-travel/. gdb runs with the
    /// xstate shim (harness/native/xstate), which completes the register writes of a step back where the kernel's XSAVE
    /// area is larger than gdb 13's buffer; the program keeps its own environment.
    /// </summary>
    public async Task<(RunResult Run, string StdoutFile)> RecordAsync(TimeTravelCapture tt)
    {
        var launch = Command(null);
        var work = Path.Combine(dir, "time-travel");
        Directory.CreateDirectory(work);
        var script = Path.Combine(work, Path.GetFileName(tt.Script));
        File.Copy(tt.Script, script, overwrite: true);
        var env = new Dictionary<string, string>(launch.Env);
        var programPreload = launch.Env.GetValueOrDefault("LD_PRELOAD");
        if (File.Exists(XstateLibrary))
        {
            env["LD_PRELOAD"] = string.IsNullOrEmpty(programPreload) ? XstateLibrary : $"{XstateLibrary} {programPreload}";
            env[XstateReportVariable] = Path.Combine(work, XstateReportFile);
        }
        else CaptureError($"time travel: {XstateLibrary} is missing (ci/setup.sh builds it): gdb's register writes go uncompleted");
        string[] inferiorEnv = string.IsNullOrEmpty(programPreload)
            ? ["-iex", "unset environment LD_PRELOAD"] : ["-iex", $"set environment LD_PRELOAD={programPreload}"];
        string[] args = ["-q", "-batch", "-nx", .. inferiorEnv, "-iex", $"unset environment {XstateReportVariable}",
                         "-x", script, "--args", launch.File, .. launch.Args];
        File.WriteAllText(Path.Combine(work, "command.txt"), "gdb " + string.Join(' ', args) + "\n");
        var spec = new ProcessSpec("gdb", args, work, Path.Combine(work, "gdb.stdout"), Path.Combine(work, "gdb.stderr"),
                                   TimeSpan.FromSeconds(cs.Budget.TimeoutSec), (long)cs.Budget.MemoryMB << 20, env);
        Progress("time travel: gdb record full with " + Path.GetFileName(tt.Script));
        using var p = new ContainedProcess(spec);
        return (await p.WaitAsync(), spec.StdoutFile);
    }

    private string XstateLibrary => Path.Combine(options.Root, "build", "harness", "xstate.so");
    private const string XstateReportVariable = "CORPUS_XSTATE_REPORT";

    /// <summary>The shim's one line, beside gdb's output: the kernel's XSAVE size, gdb's, and the writes it completed.</summary>
    public const string XstateReportFile = "xstate.txt";

    private void CaptureError(string message)
    {
        lock (cell.CaptureErrors) cell.CaptureErrors.Add(message);
    }

    /// <summary>
    /// Windows: a trace (CORPUS_TTD_TRACE) launches the run under TTD.exe, a crash capture under procdump -e -x. An
    /// absent tool is a capture error with the reason, and the run goes on without it.
    /// </summary>
    private Launch WindowsLaunch(Launch launch, string workDir, string label)
    {
        if (Environment.GetEnvironmentVariable(WindowsTtd.TraceVariable) is { Length: > 0 } mode)
        {
            var ttd = new WindowsTtd();
            if (ttd.Unavailable is { } why) CaptureError($"{label}: TTD.exe: {why}");
            // procdump -x around TTD.exe would dump TTD, not the program: the trace holds the crash anyway.
            else return ttd.Wrap(launch, Path.Combine(workDir, $"{label}-ttd"), WindowsTtd.ParseMode(mode));
        }
        if (cs.Crash is null) return launch;
        var procdump = new WindowsProcDump(tools);
        if (procdump.Unavailable is { } missing)
        {
            CaptureError($"{label}: procdump.exe (crash): {missing}");
            return launch;
        }
        return procdump.WrapCrash(launch, workDir);
    }

    /// <summary>What procdump -e and TTD.exe wrote for this run: crash dumps and traces, for WinDbg.</summary>
    private void CollectWindowsFiles(RunResult run, string workDir, string label)
    {
        var traces = Path.Combine(workDir, $"{label}-ttd");
        var files = Directory.GetFiles(workDir, "*.dmp")
            .Concat(Directory.Exists(traces) ? Directory.GetFiles(traces, "*.run") : []);
        lock (cell.Captures)
            foreach (var f in files.Where(f => !cell.Captures.Any(c => c.File == f)))
                cell.Captures.Add(new CaptureRecord(f.EndsWith(".run") ? "TTD.exe" : "procdump.exe", f, new FileInfo(f).Length, 0,
                                                    run.WallSeconds, [], $"{run.Status} in {label}; open it in WinDbg") { Run = label });
        if (cs.Crash is not null && run.Signal is not null && !files.Any())
            CaptureError($"{label}: {run.Signal} but no dump in {workDir}");
    }

    public void DeleteRun(RunResult run, string label)
    {
        try
        {
            if (cs.Crash is not null) Directory.Delete(Path.Combine(dir, label), recursive: true);
            else
            {
                File.Delete(run.StdoutFile);
                File.Delete(run.StderrFile);
            }
        }
        catch (IOException) { }
    }

    /// <summary>
    /// procdump -s/-n: after the marker and a delay, count snapshots an interval apart while the target lives.
    /// Every snapshot the manifest asked for and that was not taken is a capture error, with the reason.
    /// </summary>
    private async Task CaptureSeriesAsync(ContainedProcess p, Task trigger, TimedCapture timed, string label, ICaptureBackend? core)
    {
        var captures = Path.Combine(dir, "captures");
        void Missed(string why, string? by = null)
        {
            lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{label}: {by ?? backend.Name}: {why}");
        }
        var exited = Task.Run(async () => { while (!p.HasExited) await Task.Delay(50); });
        if (await Task.WhenAny(trigger, exited) != trigger)
        {
            Missed($"none of {timed.Count} snapshots taken: the process ended before '{timed.Marker}'");
            return;
        }
        var markerAt = p.Elapsed;
        string? how = null;
        if (timed.MemoryMB is { } mb)
        {
            // procdump -M: at the threshold, or after delaySec when the memory never gets there.
            long now = 0;
            while (!p.HasExited && p.Elapsed - markerAt < timed.DelaySec)
            {
                try { now = p.MemoryNow(); }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException or Win32Failure)
                {
                    if (p.HasExited) break;   // the run ended as it was read
                    Missed($"none of {timed.Count} snapshots taken: the run's memory cannot be read for the {mb} MB trigger: {e.Message}");
                    return;
                }
                if (now >= (long)mb << 20) break;
                await Task.Delay(50);
            }
            // procdump -M: a run that ends below the threshold was never meant to be dumped.
            if (p.HasExited) return;
            how = now >= (long)mb << 20 ? $"memory {now >> 20} MB ≥ {mb} MB, {p.Elapsed - markerAt:0.0} s after the marker"
                : $"memory stayed at {now >> 20} MB < {mb} MB: taken {timed.DelaySec} s after the marker";
        }
        else await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.DelaySec)), exited);
        Directory.CreateDirectory(captures);
        var taken = 0;
        for (var i = 0; i < timed.Count && !p.HasExited; i++)
        {
            if (i > 0 && await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.IntervalSec)), exited) == exited) break;
            try
            {
                var record = await backend.SnapshotAsync(p, captures, Interlocked.Increment(ref _snapshots) - 1, CancellationToken.None);
                if (i == 0 && how is not null) record = record with { Note = record.Note is null ? how : $"{how}; {record.Note}" };
                lock (cell.Captures) cell.Captures.Add(record with { Run = label });
                taken++;
            }
            catch (Exception e) { Missed($"snapshot {i}: {e.Message}"); }
        }
        if (taken < timed.Count && p.HasExited)
            Missed($"{taken} of {timed.Count} snapshots taken: the process ended {p.Elapsed - markerAt:0.00} s after the marker "
                   + $"(delay {timed.DelaySec} s, interval {timed.IntervalSec} s)");
        if (core is null) return;
        if (p.HasExited)
        {
            Missed("core not taken: the process had ended", core.Name);
            return;
        }
        if (core.Unavailable is { } why)
        {
            Missed(why, core.Name);
            return;
        }
        try
        {
            var record = await Task.Run(() => core.SnapshotAsync(p, captures, Interlocked.Increment(ref _snapshots) - 1, CancellationToken.None));
            lock (cell.Captures) cell.Captures.Add(record with { Run = label });
        }
        catch (Exception e) { Missed(e.Message, core.Name); }
    }

    /// <summary>
    /// procdump -e semantics through the kernel: after a crash, keep the core, name its threads with gdb and, with
    /// freelog, list every free() of the pointer that blew up. The perf map is moved beside the core either way.
    /// </summary>
    private void CollectCrash(CrashCapture crash, int pid, RunResult run, string workDir, string label)
    {
        var perfMap = ContainedProcess.PerfMapFiles(pid)[0];
        try
        {
            if (run.TimedOut) return;
            // The program's own crash handler wrote its event ring (a Windows program writes no core).
            if (crash.RingFile is { } ringName && Path.Combine(workDir, ringName) is var ring && File.Exists(ring))
                lock (cell.Captures)
                    cell.Captures.Add(new CaptureRecord("ring", ring, new FileInfo(ring).Length, 0, run.WallSeconds, [],
                                                        $"written by the program's crash handler in {label}") { Run = label });
            if (run.Signal is null) return;
            var core = new[] { "core", $"core.{pid}" }.Select(f => Path.Combine(workDir, f)).FirstOrDefault(File.Exists);
            if (core is null)
            {
                lock (cell.CaptureErrors)
                    cell.CaptureErrors.Add($"{label}: {run.Signal} but no core in {workDir} (core_pattern: {CorePattern()})");
                return;
            }
            if (File.Exists(perfMap)) File.Copy(perfMap, Path.Combine(workDir, Path.GetFileName(perfMap)), overwrite: true);
            // gdb needs the real executable behind the subject's launcher.
            var exe = subject.Kind.CrashExecutable(subject, program);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var bt = tools.Run("gdb", ["-q", "-batch", "-nx", "-ex", "thread apply all bt", exe, core], TimeSpan.FromMinutes(2));
            File.WriteAllText(Path.Combine(workDir, "gdb-threads.txt"), bt.Stdout + bt.Stderr);
            IReadOnlyList<ThreadStack> threads = [];
            if (crash.Freelog)
            {
                var facts = FreelogAnalysis.Run(tools, exe, core, FreelogScript);
                File.WriteAllText(Path.Combine(workDir, "freelog.txt"), facts.Text);
                lock (cell.CrashFacts) cell.CrashFacts[label] = facts;
                threads = facts.Frees.Select(f => new ThreadStack($"LWP {f.Thread}{(f.Aborting ? " (aborting)" : "")}", f.Frames) { Crashing = f.Aborting }).ToList();
            }
            lock (cell.Captures)
                cell.Captures.Add(new CaptureRecord("core", core, new FileInfo(core).Length, Math.Round(clock.Elapsed.TotalSeconds, 2),
                                                    run.WallSeconds, threads, $"{run.Signal} in {label}") { Run = label });
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or UnauthorizedAccessException)
        {
            lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{label}: crash capture failed: {e.Message}");
        }
        finally
        {
            foreach (var file in ContainedProcess.PerfMapFiles(pid))
                try { File.Delete(file); } catch (IOException) { }
        }
    }

    private static string CorePattern()
    {
        try { return File.ReadAllText("/proc/sys/kernel/core_pattern").Trim(); }
        catch (IOException) { return "unknown"; }
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

