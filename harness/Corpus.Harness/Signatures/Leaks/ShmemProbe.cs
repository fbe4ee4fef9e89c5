using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.LostMemory;

namespace Corpus.Harness.Signatures.Leaks;

/// <summary>What the shmem family saw when the program said it had leaked.</summary>
/// <param name="ShmemDeltaBytes">Shared memory charged to the cell at the marker (its cgroup's memory.stat shmem).</param>
/// <param name="AfterExitDeltaBytes">The cell's shared memory still charged once its processes are gone.</param>
/// <param name="HostShmemDeltaBytes">Host-wide Shmem growth at the marker: context only, other jobs move it.</param>
/// <param name="Attribution">Where the cell's figures come from ("cgroup …" or, without one, "host-wide Shmem").</param>
/// <param name="HeldBy">The processes of the cell that hold the objects the program holds by descriptor only (the
/// program, and under Wine wineserver); null on Windows, where the handle table is read for the program alone.</param>
public sealed record LeakMeasure(long BaselineBytes, long ShmemDeltaBytes, long RssBytes, int HeldObjects,
                                 long HeldFdOnlyBytes, long AfterExitDeltaBytes, IReadOnlyList<(double T, long Shmem, long Rss)> Samples,
                                 long HostShmemDeltaBytes = 0, string Attribution = "cgroup",
                                 IReadOnlyList<(double T, long Shmem)>? HostSamples = null,
                                 IReadOnlyList<LeakHolder>? HeldBy = null)
{
    /// <summary>When the figures were read (seconds into the run): the marker plus the settling time.</summary>
    public double? MeasuredAt { get; init; }

    /// <summary>
    /// A figure over the run's hold: its value at the measure, spanned by every sample within <paramref name="settleSec"/>
    /// of it (the cell's shared memory, or the RSS): the program holds still from its marker on, so this is how much
    /// the figure moved while it was meant to stand. Not to the end of the run: a program that lets go empties its
    /// memory over the last samples.
    /// </summary>
    public Interval Held(long measured, Func<(double T, long Shmem, long Rss), long> figure, double settleSec)
    {
        var hold = MeasuredAt is { } at
            ? Samples.Where(x => x.T >= at - settleSec && x.T <= at + settleSec).Select(figure).Append(measured).ToList() : [measured];
        return new Interval(measured, hold.Min(), hold.Max()) { Confidence = 0 };
    }
}

/// <summary>
/// Watches one run for the memory that belongs to no process: the cell's own shared memory, the process's resident
/// memory, and at the marker the objects it holds that nothing maps, read through the host's <see cref="ILeakMeter"/>
/// (on Linux the cell's cgroup and the lost-memory finder, which also names the other holders: under Wine, wineserver
/// holds each section too; on Windows the handle table's page-file sections). After the run the cell's shared memory
/// must be gone. The host-wide figure is sampled beside it as context only; it decides nothing, because another
/// program on the host moves it.
/// </summary>
public sealed class ShmemProbe(ShmemSpec spec, ILeakMeter meter)
{
    public ShmemSpec Spec => spec;
    public ILeakMeter Meter => meter;
    private readonly long _hostBaseline = meter.HostBytes();
    private readonly List<(double, long, long)> _samples = [];
    private readonly List<(double, long)> _host = [];
    private long _delta = -1, _rss = -1, _hostDelta;
    private double? _measuredAt;
    private HeldAtMarker? _held;

    public ShmemProbe(ShmemSpec spec) : this(spec, ILeakMeter.ForThisHost()) { }

    /// <summary>Runs alongside the process until it exits.</summary>
    public async Task<LeakMeasure> WatchAsync(ContainedProcess p)
    {
        var marker = new ManualResetEventSlim();
        p.Line += (line, _, _) => { if (line.Contains(spec.Marker)) marker.Set(); };
        // The measure waits for the marker on a thread of its own, not between samples: under Wine at load 20 one
        // sample of the Windows counters took 3 s, and a loop that measured between samples came after the hold.
        var measure = Task.Factory.StartNew(() =>
        {
            while (!marker.Wait(50)) if (p.HasExited) return;
            Thread.Sleep(TimeSpan.FromSeconds(spec.SettleSec));
            if (!p.HasExited) Measure(p);
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        var sample = Task.Factory.StartNew(() =>
        {
            while (!p.HasExited)
            {
                var t = Math.Round(p.Elapsed, 2);
                var host = meter.HostBytes() - _hostBaseline;
                var cell = meter.CellBytes(p, _hostBaseline);
                var rss = meter.RssBytes(p.Pid);
                lock (_samples)
                {
                    _samples.Add((t, cell, rss));
                    _host.Add((t, host));
                }
                Thread.Sleep(100);
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        await Task.WhenAll(measure, sample);
        // Whatever the outcome, the cell's shared memory must be gone once its processes are.
        var after = meter.AfterBytes(p, _hostBaseline);
        for (var i = 0; i < 50 && Math.Abs(after) > ReturnSlack; i++)
        {
            await Task.Delay(100);
            after = meter.AfterBytes(p, _hostBaseline);
        }
        lock (_samples)
            return new LeakMeasure(_hostBaseline, _delta, _rss, _held?.Objects ?? -1, _held?.Bytes ?? -1, after, [.. _samples],
                                   _hostDelta, meter.Attribution(p), [.. _host], _held?.HeldBy) { MeasuredAt = _measuredAt };
    }

    /// <summary>How far from zero the cell's shared memory may be after the run, in bytes.</summary>
    public long ReturnSlack => (long)(spec.ReturnToleranceMB * 1048576);

    private void Measure(ContainedProcess p)
    {
        _measuredAt = Math.Round(p.Elapsed, 2);
        _delta = meter.CellBytes(p, _hostBaseline);
        _hostDelta = meter.HostBytes() - _hostBaseline;
        _rss = meter.RssBytes(p.Pid);
        _held = meter.Held(p);
        if (_held.CellBytes is { } cell) _delta = cell;
    }

    /// <summary>
    /// The verdict of the shmem family, and why, from the figures' intervals (<paramref name="shmem"/> and
    /// <paramref name="rss"/>: the run's hold, or the mean of several runs): reproduced when the cell's shared memory is
    /// wholly within the leak ± tolerance, so are the bytes held by descriptor only, and the RSS wholly under its bound;
    /// clean when both are wholly within the tolerance of nothing; inconclusive while a figure straddles a bound.
    /// </summary>
    public (Outcome Outcome, string Detail) Judge(LeakMeasure m, Interval shmem, Interval rss)
    {
        double leak = spec.LeakBytes, tol = spec.Tolerance * leak, maxRss = spec.MaxRssFraction * leak;
        static string Mb(double b) => $"{b / 1048576.0:0.0} MB";
        var facts = meter.Describe(m, _held);
        if (m.ShmemDeltaBytes < 0 && m.HeldObjects < 0) return (Outcome.WrongFailure, "the marker never came: " + facts);
        if (Math.Abs(m.AfterExitDeltaBytes) > ReturnSlack)
            return (Outcome.Error, $"containment: the cell's shared memory was still charged after the run (more than {spec.ReturnToleranceMB} MB); {facts}");
        // The descriptors held are counted, not sampled: one exact figure.
        var heldIn = Math.Abs(m.HeldFdOnlyBytes - leak) <= tol;
        var grew = shmem.Low >= leak - tol && shmem.High <= leak + tol;
        var small = rss.High <= maxRss;
        if (grew && heldIn && small) return (Outcome.Reproduced, $"the memory belongs to no process: {facts}");
        if (shmem.High <= tol && m.HeldFdOnlyBytes <= tol) return (Outcome.Clean, $"nothing held: {facts}");
        var across = new[] { (shmem, leak - tol), (shmem, leak + tol), (shmem, tol), (rss, maxRss) }
            .Where(x => x.Item1.Low < x.Item2 && x.Item2 < x.Item1.High)
            .Select(x => $"{(ReferenceEquals(x.Item1, rss) ? "RSS" : "shared memory")} [{Mb(x.Item1.Low)}, {Mb(x.Item1.High)}] across {Mb(x.Item2)}").ToList();
        if (across.Count > 0) return (Outcome.Inconclusive, $"{string.Join("; ", across)}: {facts}");
        return (Outcome.WrongFailure, $"not the leak's shape (expected +{Mb(spec.LeakBytes)} ±{spec.Tolerance:P0}, RSS ≤ {spec.MaxRssFraction:P0}): {facts}");
    }
}
