namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// One stack sample: its frames from the root (the thread's entry) to the leaf (where the sample landed), and its
/// weight (1 for a sample; milliseconds for time spans of an evented profile; bytes for allocation samples).
/// </summary>
public sealed record TraceSample(IReadOnlyList<string> Frames, double Weight = 1)
{
    public string? Thread { get; init; }
    /// <summary>Seconds since the trace began, where the backend knows it.</summary>
    public double? Time { get; init; }
}

/// <summary>One event: when (seconds since the trace began), its name (a syscall, a Wine call, a GC event) and fields.</summary>
public sealed record TraceEvent(double Time, string Name, IReadOnlyDictionary<string, string> Fields)
{
    public string? Thread { get; init; }

    /// <summary>What an evidence regex is matched against: the name, then each field as name=value.</summary>
    public string Text => Fields.Count == 0 ? Name : $"{Name} {string.Join(' ', Fields.Select(kv => $"{kv.Key}={kv.Value}"))}";
}

/// <summary>
/// The common trace every backend reads its tool's output into (dotnet-trace's speedscope, Mono's log profiler,
/// perf, Wine's channel log, ETW): stack samples and an ordered event list. Evidence reads this, never a tool's format.
/// </summary>
/// <param name="Unit">What a sample's weight counts: "samples", "milliseconds" or "bytes".</param>
public sealed record TraceModel(string Kind, string Unit, IReadOnlyList<TraceSample> Samples, IReadOnlyList<TraceEvent> Events)
{
    /// <summary>The tool's own files the model was read from (kept beside it, counted in the trace's bytes).</summary>
    public IReadOnlyList<string> Files { get; init; } = [];
    /// <summary>A short note on how it was read (e.g. samples dropped as idle).</summary>
    public string? Note { get; init; }
    /// <summary>The process's main thread as its samples name it (the thread whose id is the process's); null when the backend cannot tell.</summary>
    public string? MainThread { get; init; }
    /// <summary>
    /// False when the samples are an exact account (Mono's allocation summary: every byte, by stack), so a share of them
    /// has no sampling error; true for draws over time (stack samples, allocation ticks), whose shares carry an interval.
    /// </summary>
    public bool Sampled { get; init; } = true;

    public double TotalWeight => Samples.Sum(s => s.Weight);

    /// <summary>Events in time order (a stable sort: a tool's order wins at equal times).</summary>
    public IReadOnlyList<TraceEvent> Ordered => Events.OrderBy(e => e.Time).ToList();
}

/// <summary>
/// What one trace cost and where it is: the cell's record (summary.json and facts.json "traces").
/// </summary>
/// <param name="Run">The run label of the traced run.</param>
/// <param name="N">The traced run's {n} in a sweep.</param>
/// <param name="Bytes">The tool's files on disk (raw trace and conversions).</param>
/// <param name="Slowdown">The traced run's wall time over the fastest untraced run of the cell at the same n; null without one.</param>
/// <param name="MetricSlowdown">The same for the family's metric (a sweep's deserialize_s), where both runs printed it.</param>
/// <param name="Speedscope">The speedscope JSON of the samples (open in speedscope); null for events only.</param>
/// <param name="FlameGraph">The self-contained HTML flame graph; null for events only.</param>
public sealed record TraceRecord(string Backend, string Kind, string Run, long? N, string? File, long Bytes, int Samples, int Events,
                                 double WallSeconds, double? UntracedWallSeconds, double? Slowdown, double? MetricSlowdown,
                                 string? Speedscope, string? FlameGraph, string? Error = null)
{
    public string? Note { get; init; }
    /// <summary>Seconds spent reading and converting the tool's output after the run.</summary>
    public double ReadSeconds { get; init; }

    public string KeyFigure => Error is not null ? $"trace failed ({Backend})"
        : $"trace {Backend}: {Samples} samples, {Events} events, {Bytes / 1048576.0:0.0} MB"
          + (Slowdown is { } s ? $", ×{s:0.00} wall" : "");
}
