using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Runner;

/// <param name="ForceRuns">For races: run exactly this many times, without stopping at the first hit, to measure a rate.</param>
public sealed record RunOptions(string Root, string RunDir, bool Keep, Action<string> Progress, int? ForceRuns = null);

/// <summary>Runs one (repro, case, variant, subject) cell: build, contained runs, captures, signature, outcome.</summary>
public sealed class CellRunner(RunOptions options, Builder builder, IToolRunner tools)
{
    public const string MetricPrefix = "METRIC ";

    public async Task<CellResult> RunAsync(Manifest m, CaseSpec cs, string variant, Subject subject, Expectation? expected)
    {
        var key = new CellKey(m.Id, cs.Id, variant, subject.Name);
        var dir = Path.Combine(options.RunDir, m.Id, cs.Id, variant, subject.Slug);
        var cell = new CellResult
        {
            Key = key, Expected = expected, ArtifactDir = dir,
            Rerun = $"make run REPRO={m.Id} CASE={cs.Id} VARIANT={variant} SUBJECT={subject.Name} KEEP=1",
        };
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, "rerun.txt"), cell.Rerun + "\n");
        try
        {
            await RunCoreAsync(m, cs, variant, subject, cell, dir);
        }
        catch (Exception e)
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = $"harness error: {e.GetType().Name}: {e.Message}";
            File.WriteAllText(Path.Combine(dir, "harness-error.txt"), e.ToString());
        }
        cell.Seconds = Math.Round(clock.Elapsed.TotalSeconds, 2);
        (cell.Gate, cell.GateMessage) = CellResult.Compare(cell.Outcome, expected);
        File.WriteAllText(Path.Combine(dir, "cell.json"), JsonSerializer.Serialize(Report.SummaryWriter.CellJson(cell, options.Root),
                          Report.SummaryWriter.JsonOptions));
        if (cell.Gate == GateStatus.Pass && !options.Keep)
        {
            Directory.Delete(dir, recursive: true);
            cell.ArtifactDir = null;
        }
        return cell;
    }

    private async Task RunCoreAsync(Manifest m, CaseSpec cs, string variant, Subject subject, CellResult cell, string dir)
    {
        if (!cs.Platforms.Contains(OperatingSystem.IsWindows() ? "windows" : "linux"))
        {
            cell.Outcome = Outcome.Unsupported;
            cell.Detail = $"runs only on {string.Join(", ", cs.Platforms)}";
            return;
        }
        if (subject.Unavailable is { } why)
        {
            cell.Outcome = Outcome.Unsupported;
            cell.Detail = $"subject {subject.Name} unavailable: {why}";
            return;
        }
        if ((cs.CmakeTarget is not null) != (subject.Kind == SubjectKind.Native))
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = cs.CmakeTarget is not null
                ? $"case {cs.Id} runs the native program {cs.CmakeTarget}: give it a native subject (linux), not {subject.Name}"
                : $"case {cs.Id} runs the .NET/Mono program: {subject.Name} is a native subject";
            return;
        }
        var build = builder.Ensure(m, subject.Flavor, cs.CmakeTarget);
        if (build.Program is null)
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = build.Error!;
            return;
        }
        cell.Metrics["runtime"] = subject.Kind switch
        {
            SubjectKind.Mono => $"mono {subject.Path}",
            SubjectKind.CoreClr => $"coreclr {subject.Version} at {subject.Path}",
            _ => $"native on {System.Runtime.InteropServices.RuntimeInformation.OSDescription}",
        };
        var backend = CaptureBackendFor(subject, cs);
        if (cs.Signature.Complexity is { } cx)
            await RunSweepAsync(m, cs, variant, subject, build.Program, cx, backend, cell, dir);
        else if (cs.Signature.Statistics is { } st)
            await RunRepeatedAsync(cs, variant, subject, build.Program, st, backend, cell, dir);
        else
            await RunOnceAsync(m, cs, variant, subject, build.Program, backend, cell, dir);
    }

    private ICaptureBackend CaptureBackendFor(Subject s, CaseSpec cs) => s.Kind switch
    {
        SubjectKind.Mono => new MonoThreadDump(),
        SubjectKind.CoreClr => new CoreClrCreateDump(tools, s.CreateDump,
                                                     Path.Combine(options.Root, "build", "harness", "DumpFacts", "DumpFacts.dll"),
                                                     cs.Timed?.Heap ?? false),
        _ => new LinuxProcDump(tools),
    };

    private string FreelogLibrary => Path.Combine(options.Root, "build", "harness", "freelog.so");
    private string FreelogScript => Path.Combine(options.Root, "harness", "native", "freelog", "freelog.py");

    private (string File, List<string> Args, Dictionary<string, string> Env) Command(
        Subject s, string program, CaseSpec cs, string variant, long? n)
    {
        var args = cs.Args.Select(a => a.Replace("{variant}", variant)
                                        .Replace("{n}", n?.ToString(CultureInfo.InvariantCulture) ?? "{n}")).ToList();
        var env = new Dictionary<string, string>(cs.Env);
        var freelog = cs.Crash is { Freelog: true };
        if (freelog) env["LD_PRELOAD"] = FreelogLibrary;
        if (s.Kind == SubjectKind.Native) return (program, args, env);
        if (s.Kind == SubjectKind.Mono)
        {
            // Without this, Mono's crash reporter attaches gdb after an abort and can hang there.
            env.TryAdd("MONO_DEBUG", "no-gdb-backtrace");
            // --jitmap writes /tmp/perf-PID.map, which names JIT code addresses found in a core.
            return (s.Path, freelog ? ["--debug", "--jitmap", program, .. args] : ["--debug", program, .. args], env);
        }
        if (freelog) env["DOTNET_PerfMapEnabled"] = "1";
        env["DOTNET_ROOT"] = s.Path;
        env.TryAdd("DOTNET_CLI_TELEMETRY_OPTOUT", "1");
        // --fx-version pins the exact runtime of the subject, even when the root holds several.
        return (Path.Combine(s.Path, "dotnet"), ["exec", "--fx-version", s.Version!, program, .. args], env);
    }

    private async Task<(RunResult Run, Dictionary<string, double> Metrics)> ExecuteAsync(
        Subject s, string program, CaseSpec cs, string variant, long? n, string dir, string label,
        TimedCapture? timed, ICaptureBackend backend, CellResult cell, Func<ContainedProcess, Task>? alongside = null,
        Action<RunResult>? exited = null)
    {
        var (file, args, env) = Command(s, program, cs, variant, n);
        // A crash capture gets a folder per run: the kernel writes "core" into the working directory.
        var workDir = cs.Crash is null ? dir : Path.Combine(dir, label);
        Directory.CreateDirectory(workDir);
        var spec = new ProcessSpec(file, args, workDir, Path.Combine(workDir, $"{label}.stdout"), Path.Combine(workDir, $"{label}.stderr"),
                                   TimeSpan.FromSeconds(cs.Budget.TimeoutSec), (long)cs.Budget.MemoryMB << 20, env,
                                   CoreDumps: cs.Crash?.Core ?? false);
        using var janitor = new ShmJanitor(Path.Combine(options.Root, ".cache", "ledger"));
        using var p = new ContainedProcess(spec);
        janitor.Own(p.Pid);
        Task? captureTask = null;
        if (timed is not null)
        {
            if (backend.Unavailable is { } why) cell.CaptureErrors.Add($"{backend.Name}: {why}");
            else
            {
                var trigger = new TaskCompletionSource();
                p.Line += (line, _, _) => { if (line.Contains(timed.Marker)) trigger.TrySetResult(); };
                captureTask = CaptureSeriesAsync(p, trigger.Task, timed, backend, Path.Combine(dir, "captures"), cell,
                                                 timed.Core ? new LinuxProcDump(tools) : null);
            }
        }
        var side = alongside?.Invoke(p);
        var run = await p.WaitAsync();
        if (captureTask is not null) await captureTask;
        if (side is not null) await side;
        exited?.Invoke(run);
        if (cs.Crash is not null) CollectCrash(cs.Crash, s, program, p.Pid, run, workDir, label, cell);
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
            catch (JsonException e) { cell.CaptureErrors.Add($"{label}: unreadable METRIC line: {e.Message}"); }
        }
        lock (cell.Runs) cell.Runs.Add(new RunSummary(label, run.Status, run.WallSeconds, run.PeakBytes, metrics, run.Containment));
        return (run, metrics);
    }

    /// <summary>
    /// procdump -e semantics through the kernel: after a crash, keep the core, name its threads with gdb and, with
    /// freelog, list every free() of the pointer that blew up. The perf map is moved beside the core either way.
    /// </summary>
    private void CollectCrash(CrashCapture crash, Subject s, string program, int pid, RunResult run, string workDir,
                              string label, CellResult cell)
    {
        var perfMap = $"/tmp/perf-{pid}.map";
        try
        {
            if (run.Signal is null || run.TimedOut) return;
            var core = new[] { "core", $"core.{pid}" }.Select(f => Path.Combine(workDir, f)).FirstOrDefault(File.Exists);
            if (core is null)
            {
                lock (cell.CaptureErrors)
                    cell.CaptureErrors.Add($"{label}: {run.Signal} but no core in {workDir} (core_pattern: {CorePattern()})");
                return;
            }
            if (File.Exists(perfMap)) File.Copy(perfMap, Path.Combine(workDir, Path.GetFileName(perfMap)), overwrite: true);
            // gdb needs the real executable behind the subject's launcher.
            var exe = s.Kind switch
            {
                SubjectKind.Mono => new FileInfo(s.Path).ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? s.Path,
                SubjectKind.CoreClr => Path.Combine(s.Path, "dotnet"),
                _ => program,
            };
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var bt = tools.Run("gdb", ["-q", "-batch", "-nx", "-ex", "thread apply all bt", exe, core], TimeSpan.FromMinutes(2));
            File.WriteAllText(Path.Combine(workDir, "gdb-threads.txt"), bt.Stdout + bt.Stderr);
            IReadOnlyList<ThreadStack> threads = [];
            if (crash.Freelog)
            {
                var facts = FreelogAnalysis.Run(tools, exe, core, FreelogScript);
                File.WriteAllText(Path.Combine(workDir, "freelog.txt"), facts.Text);
                lock (cell.CrashFacts) cell.CrashFacts[label] = facts;
                threads = facts.Frees.Select(f => new ThreadStack($"LWP {f.Thread}{(f.Aborting ? " (aborting)" : "")}", f.Frames)).ToList();
            }
            lock (cell.Captures)
                cell.Captures.Add(new CaptureRecord("core", core, new FileInfo(core).Length, Math.Round(clock.Elapsed.TotalSeconds, 2),
                                                    run.WallSeconds, threads, $"{run.Signal} in {label}"));
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or UnauthorizedAccessException)
        {
            lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{label}: crash capture failed: {e.Message}");
        }
        finally
        {
            try { File.Delete(perfMap); } catch (IOException) { }
        }
    }

    private static string CorePattern()
    {
        try { return File.ReadAllText("/proc/sys/kernel/core_pattern").Trim(); }
        catch (IOException) { return "unknown"; }
    }

    /// <summary>procdump -s/-n: after the marker and a delay, count snapshots an interval apart while the target lives.</summary>
    private static async Task CaptureSeriesAsync(ContainedProcess p, Task trigger, TimedCapture timed, ICaptureBackend backend,
                                                 string dir, CellResult cell, ICaptureBackend? core = null)
    {
        var exited = Task.Run(async () => { while (!p.HasExited) await Task.Delay(50); });
        if (await Task.WhenAny(trigger, exited) != trigger) return;
        await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.DelaySec)), exited);
        Directory.CreateDirectory(dir);
        for (var i = 0; i < timed.Count && !p.HasExited; i++)
        {
            if (i > 0 && await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.IntervalSec)), exited) == exited) break;
            try
            {
                var record = await backend.SnapshotAsync(p, dir, i, CancellationToken.None);
                lock (cell.Captures) cell.Captures.Add(record);
            }
            catch (Exception e) { lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{backend.Name} snapshot {i}: {e.Message}"); }
        }
        if (core is null || p.HasExited) return;
        if (core.Unavailable is { } why)
        {
            lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{core.Name}: {why}");
            return;
        }
        try
        {
            var record = await Task.Run(() => core.SnapshotAsync(p, dir, timed.Count, CancellationToken.None));
            lock (cell.Captures) cell.Captures.Add(record);
        }
        catch (Exception e) { lock (cell.CaptureErrors) cell.CaptureErrors.Add($"{core.Name}: {e.Message}"); }
    }

    private async Task RunOnceAsync(Manifest m, CaseSpec cs, string variant, Subject s, string program, ICaptureBackend backend,
                                    CellResult cell, string dir)
    {
        options.Progress($"{cell.Key} …");
        ShmemProbe? probe = cs.Signature.Shmem is { } sh ? new ShmemProbe(sh) : null;
        LeakMeasure? leak = null;
        var (run, metrics) = await ExecuteAsync(s, program, cs, variant, null, dir, "run", cs.Timed, backend, cell,
                                                probe is null ? null : async p => leak = await probe.WatchAsync(p));
        foreach (var kv in metrics) cell.Metrics[kv.Key] = kv.Value;
        cell.Metrics["wall_s"] = run.WallSeconds;
        cell.Metrics["peak_mb"] = Math.Round(run.PeakBytes / 1048576.0, 1);
        cell.Metrics["status"] = run.Status;
        var (outcome, detail) = Classify(cs.Signature, run);
        if (outcome != Outcome.Unsupported && probe is not null && leak is not null)
        {
            Evidence.RecordLeak(cell, leak);
            (outcome, detail) = ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad
                ? (Outcome.WrongFailure, $"{run.Status}: the program did not finish ({bad}); {ProcessMatch.Tail(run)}")
                : probe.Judge(leak);
        }
        cell.Outcome = outcome;
        cell.Detail = detail;
        if (outcome == Outcome.Reproduced)
        {
            Evidence.CheckStacks(cs.Signature, cell);
            Evidence.CheckHeap(cs.Signature, cell);
        }
    }

    /// <summary>One run against the process signature: the bug, clean, or a failure of another kind.</summary>
    private static (Outcome, string) Classify(Signature sig, RunResult run)
    {
        if (sig.Unsupported is { } u && ProcessMatch.Mismatch(u.When, run) is null)
            return (Outcome.Unsupported, $"{u.Reason} ({run.Status})");
        if (sig.Process is null) return (Outcome.Clean, run.Status);
        var bug = ProcessMatch.Mismatch(sig.Process!, run);
        if (bug is null) return (Outcome.Reproduced, $"{run.Status}; output matches the signature");
        var clean = ProcessMatch.Mismatch(sig.Clean, run);
        if (clean is null) return (Outcome.Clean, $"{run.Status} in {run.WallSeconds:0.00} s; no signature ({bug})");
        return (Outcome.WrongFailure, $"{run.Status}: not the signature ({bug}) and not clean ({clean}); {ProcessMatch.Tail(run)}");
    }

    /// <summary>
    /// Statistics family: repeat until the first hit, or until enough clean runs bound the rate below epsilon
    /// at 95%. A run that fails any other way stops the cell as a wrong-failure.
    /// </summary>
    private async Task RunRepeatedAsync(CaseSpec cs, string variant, Subject s, string program, StatisticsSpec st,
                                        ICaptureBackend backend, CellResult cell, string dir)
    {
        var needed = st.RunsForClean;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        int started = 0, runs = 0, hits = 0;
        string? firstHit = null, failure = null, unsupported = null;
        var forced = options.ForceRuns;
        // Set as soon as a run ends with the signature, before its crash capture is read, so no new run starts.
        var hitSeen = false;
        void Exited(RunResult r)
        {
            if (forced is null && Classify(cs.Signature, r).Item1 == Outcome.Reproduced) hitSeen = true;
        }
        bool MayStart() => failure is null && unsupported is null && (forced is { } f
            ? started < f
            : !hitSeen && hits == 0 && started < needed && started < st.MaxRuns && clock.Elapsed.TotalSeconds < st.BudgetSec);
        var inFlight = new Dictionary<Task<(RunResult Run, Dictionary<string, double> Metrics)>, string>();
        while (true)
        {
            while (inFlight.Count < st.Parallel && MayStart())
            {
                var label = $"run{started++:D4}";
                inFlight[ExecuteAsync(s, program, cs, variant, null, dir, label, cs.Timed, backend, cell, exited: Exited)] = label;
            }
            if (inFlight.Count == 0) break;
            var done = await Task.WhenAny(inFlight.Keys);
            var doneLabel = inFlight[done];
            inFlight.Remove(done);
            var (run, _) = await done;
            runs++;
            var (outcome, detail) = Classify(cs.Signature, run);
            switch (outcome)
            {
                case Outcome.Unsupported:
                    unsupported ??= detail;
                    break;
                case Outcome.WrongFailure:
                    failure ??= $"{doneLabel}: {detail}";
                    break;
                case Outcome.Reproduced:
                    hits++;
                    firstHit ??= doneLabel;
                    options.Progress($"{cell.Key} hit in {doneLabel}: {detail}");
                    break;
                default:
                    // Hundreds of clean runs: keep the first one's output only.
                    if (doneLabel != "run0000") DeleteRun(run, dir, doneLabel, cs.Crash is not null);
                    break;
            }
            if (runs % 50 == 0) options.Progress($"{cell.Key} {hits}/{runs} hits, {clock.Elapsed.TotalSeconds:0} s");
        }
        var rate = Evidence.RecordRate(cell, hits, runs, clock.Elapsed.TotalSeconds, needed);
        if (unsupported is not null)
        {
            (cell.Outcome, cell.Detail) = (Outcome.Unsupported, unsupported);
        }
        else if (failure is not null)
        {
            (cell.Outcome, cell.Detail) = (Outcome.WrongFailure, failure);
        }
        else if (hits > 0)
        {
            cell.Outcome = Outcome.Reproduced;
            cell.Detail = $"first hit in {firstHit} ({rate}); output matches the signature";
            Evidence.CheckStacks(cs.Signature, cell);
            Evidence.CheckDoubleFree(cs.Signature, cell, firstHit!);
        }
        else if (runs >= needed)
        {
            cell.Outcome = Outcome.Clean;
            cell.Detail = $"0 hits in {runs} runs: p < {RaceStatistics.UpperBoundAfterZeroHits(runs):P2} at 95% (needed {needed} runs for p < {st.Epsilon:P0})";
        }
        else
        {
            cell.Outcome = Outcome.Error;
            cell.Detail = $"inconclusive: 0 hits in {runs} runs within the {st.BudgetSec:0} s budget; "
                          + $"{needed} clean runs are needed to call it clean (p < {st.Epsilon:P0} at 95%)";
        }
    }

    private static void DeleteRun(RunResult run, string dir, string label, bool ownFolder)
    {
        try
        {
            if (ownFolder) Directory.Delete(Path.Combine(dir, label), recursive: true);
            else
            {
                File.Delete(run.StdoutFile);
                File.Delete(run.StderrFile);
            }
        }
        catch (IOException) { }
    }

    private async Task RunSweepAsync(Manifest m, CaseSpec cs, string variant, Subject s, string program, ComplexitySpec cx,
                                     ICaptureBackend backend, CellResult cell, string dir)
    {
        var sizes = cx.Sizes.Order().ToList();
        cell.SeriesMetric = cx.Metric;
        var points = new List<(double N, double Seconds)>();
        foreach (var n in sizes)
        {
            // Short runs are repeated and the minimum kept: it is the least disturbed by the host.
            var best = double.MaxValue;
            double spent = 0;
            for (var rep = 0; rep == 0 || (spent < cx.RepeatUnderSec && rep < 5); rep++)
            {
                options.Progress($"{cell.Key} n={n} rep {rep + 1} …");
                var (run, metrics) = await ExecuteAsync(s, program, cs, variant, n, dir, $"n{n}-rep{rep}", null, backend, cell);
                spent += run.WallSeconds;
                if (ProcessMatch.Mismatch(cs.Signature.Clean, run) is { } bad || !metrics.TryGetValue(cx.Metric, out var value))
                {
                    cell.Outcome = Outcome.WrongFailure;
                    cell.Detail = $"run n={n} did not finish cleanly ({ProcessMatch.Mismatch(cs.Signature.Clean, run) ?? $"no metric '{cx.Metric}'"}); "
                                  + ProcessMatch.Tail(run);
                    return;
                }
                best = Math.Min(best, value);
            }
            points.Add((n, Math.Max(best, 1e-6)));
            cell.Series.Add(new SeriesPoint(n, best));
            options.Progress($"{cell.Key} n={n}: {cx.Metric}={best:0.000}");
        }
        if (cs.Timed is not null)
        {
            // Snapshots stop the process while they are written, so they get a run of their own that is not timed.
            options.Progress($"{cell.Key} n={sizes[^1]} capture run …");
            await ExecuteAsync(s, program, cs, variant, sizes[^1], dir, $"capture-n{sizes[^1]}", cs.Timed, backend, cell);
        }
        // The verdict uses the outlier-resistant slope; the least-squares fit and its r² are kept beside it.
        var fit = ComplexityFit.LogLog(points);
        var exponent = ComplexityFit.MedianPairSlope(points);
        cell.Metrics["exponent"] = Math.Round(exponent, 3);
        cell.Metrics["ls_exponent"] = Math.Round(fit.Exponent, 3);
        cell.Metrics["r2"] = Math.Round(fit.R2, 4);
        cell.Metrics[$"{cx.Metric}@{sizes[^1]}"] = Math.Round(points[^1].Seconds, 4);
        var facts = $"median pair slope {exponent:0.00}; least squares {fit.Exponent:0.00}, r² {fit.R2:0.000}";
        if (exponent >= cx.ReproducedMin && fit.R2 >= cx.MinR2)
        {
            cell.Outcome = Outcome.Reproduced;
            cell.Detail = $"exponent {exponent:0.00} ≥ {cx.ReproducedMin} ({facts})";
            Evidence.CheckStacks(cs.Signature, cell);
        }
        else if (exponent <= cx.CleanMax)
        {
            cell.Outcome = Outcome.Clean;
            cell.Detail = $"exponent {exponent:0.00} ≤ {cx.CleanMax} ({facts})";
        }
        else
        {
            cell.Outcome = Outcome.WrongFailure;
            cell.Detail = $"exponent {exponent:0.00} is neither clean (≤ {cx.CleanMax}) nor the bug (≥ {cx.ReproducedMin}, r² ≥ {cx.MinR2}) ({facts})";
        }
    }

}
