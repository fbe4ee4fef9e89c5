using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Capture.Traces;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// The traced run (capture.trace): one run on the subject's trace backend, in the cell's folder (trace/, its private
/// TMPDIR in trace/tmp, removed after), read into the common model; its speedscope JSON and flame graph beside the
/// cell's records; its cost against the fastest untraced run of the cell at the same n. A trace that could not be
/// taken is a capture error and a record with the reason. What it made, it returns to the launcher, which records it.
/// </summary>
public sealed class TracedRun(RunLauncher runs, IToolRunner tools, string root, CellResult cell, IReadOnlyList<ITraceAnalyser> analysers)
{
    /// <summary>A traced run's record, its model when it was read, its capture error; <paramref name="Unavailable"/>
    /// when the subject has no trace backend here (nothing to take again).</summary>
    public sealed record Result(TraceRecord Record, TraceModel? Model, RunFindings Findings, bool Unavailable = false);

    private static int s_traceTmps;

    /// <summary>Room left for a socket's file name in the traced run's tmp ("dotnet-diagnostic-PID-TICKS-socket").</summary>
    public const int SocketNameRoom = 56;

    /// <summary>Where a traced run's sockets go: the cell's own tmp, else one named NAME under TMPDIR, else under /tmp.</summary>
    internal static string SocketFolder(string cellTmp, string tempPath, string name)
    {
        if (cellTmp.Length + SocketNameRoom <= 107) return cellTmp;
        var under = Path.Combine(tempPath, name);
        return IHost.Current.SocketPathMax is not { } max || under.Length + SocketNameRoom <= max ? under : Path.Combine("/tmp", name);
    }

    public async Task<Result> RunAsync(TraceCapture trace, long? n, int attempt = 1)
    {
        var label = (n is null ? "trace" : $"trace-n{n}") + (attempt == 1 ? "" : $"-{attempt}");
        var subject = runs.Subject;
        var backend = subject.Kind.TraceBackend(subject, trace, new CaptureContext(tools, root, false));
        Result Failed(string why, double wall = 0, bool unavailable = false) =>
            new(new TraceRecord(backend.Name, trace.Kind, label, n, null, 0, 0, 0, wall, null, null, null, null, null, why), null,
                RunFindings.Error($"{label}: {backend.Name}: {why}"), unavailable);
        if (backend.Unavailable is { } unavailable) return Failed(unavailable, unavailable: true);
        var work = Path.Combine(runs.Dir, "trace");
        // A later traced run (a retake, or more samples for a share) keeps the earlier ones beside it.
        if (attempt > 1 && Directory.Exists(work)) Directory.Move(work, $"{work}.attempt{attempt - 1}");
        var tmp = Path.Combine(work, "tmp");
        // A Unix socket's path has at most 107 bytes: the runtime's and dotnet-trace's sockets (about 50 bytes of name)
        // in a deep cell folder would not fit, so such a cell's private tmp is a short one under the harness's TMPDIR.
        // A checkout deep enough puts even that over (a lab's fresh clone: 114 bytes), and then it is /tmp, with a
        // ledgered teardown so that a killed harness leaves nothing there.
        tmp = SocketFolder(tmp, Path.GetTempPath(), $"corpus-trace-{Environment.ProcessId}-{Interlocked.Increment(ref s_traceTmps)}");
        var teardown = tmp.StartsWith("/tmp/corpus-trace-", StringComparison.Ordinal) ? Supervisor.AddTeardown("rm", "-rf", "--", tmp) : null;
        Directory.CreateDirectory(work);
        Directory.CreateDirectory(tmp);
        var run = new TraceRun(trace, work, tmp, label, tools, root)
                  { Analysers = trace.Analysers.Select(k => analysers.Single(a => a.Key == k)).ToList() };
        runs.Progress($"{cell.Key} {label}: {backend.Name} ({trace.Kind}) …");
        RunOutput output;
        try
        {
            output = await runs.RunAsync(n, label, wrap: l => backend.Wrap(l with { Env = new Dictionary<string, string>(l.Env) { ["TMPDIR"] = tmp } }, run),
                                         timeout: trace.TimeoutSec is { } t ? TimeSpan.FromSeconds(t) : null);
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
        (string Speedscope, string Html)? pictures = model.Samples.Count == 0 ? null : TracePictures.Write(model, runs.Dir, label, $"{cell.Key} on {subject.Name}");
        var (baseWall, metricRatio) = Baseline(n, output);
        var files = model.Files.Concat(pictures is null ? [] : new[] { pictures.Value.Speedscope, pictures.Value.Html }).Where(File.Exists).ToList();
        var record = new TraceRecord(backend.Name, trace.Kind, label, n, model.Files.FirstOrDefault(), files.Sum(f => new FileInfo(f).Length),
                                     model.Samples.Count, model.Events.Count, output.Run.WallSeconds, baseWall,
                                     baseWall is null ? null : Ratio(output.Run.WallSeconds, baseWall), metricRatio,
                                     pictures?.Speedscope, pictures?.Html)
                     { Note = model.Note, ReadSeconds = Math.Round(clock.Elapsed.TotalSeconds, 2) };
        return new Result(record, model, new RunFindings());
    }

    private static double? Ratio(double traced, double? plain) => plain is > 0 ? Math.Round(traced / plain.Value, 3) : null;

    /// <summary>The untraced runs' best wall time at this size, and the traced run's metric against the family's own point.</summary>
    private (double? Wall, double? MetricRatio) Baseline(long? n, RunOutput traced)
    {
        var untraced = cell.RunsNow().Where(r => r.N == n && !r.CaptureOnly && r.ExitedZero).ToList();
        var captures = cell.CapturesNow();
        // A snapshot stops the process while it is written: the untraced run's time without those pauses.
        double Paused(string runLabel) => captures.Where(c => c.Run == runLabel).Sum(c => c.Seconds);
        double? wall = untraced.Count == 0 ? null : untraced.Min(r => r.WallSeconds - Paused(r.Label));
        if (cell.SeriesMetric is not { } metric || !traced.Metrics.TryGet(metric, out var tracedMetric)) return (wall, null);
        // The family's own point at this size (a power sweep's geometric mean, an exponential sweep's fastest run),
        // else the fastest run's metric, pauses taken off.
        var plain = cell.Series.FirstOrDefault(p => p.X == n)?.Y
                    ?? untraced.Select(r => r.Metrics.TryGet(metric, out var m) ? m - Paused(r.Label) : (double?)null).OfType<double>().DefaultIfEmpty(0).Min();
        return (wall, Ratio(tracedMetric, plain));
    }
}
