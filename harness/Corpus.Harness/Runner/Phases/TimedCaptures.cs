using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;

namespace Corpus.Harness.Runner.Phases;

/// <summary>
/// The capture phase beside a run (capture.timed): procdump -s/-n semantics. After the marker and a delay, snapshots an
/// interval apart while the target lives, then a core if asked; only then are the snapshots read (ClrMD's read of a
/// createdump core), so that reading spends none of the program's time after the marker. Every snapshot the manifest
/// asked for and that was not taken is a capture error, with the reason. When every snapshot came out short (no thread
/// could be walked), more are taken while the run lives, up to the capture's retakes. Snapshot files are numbered across the cell's runs, so a sweep that
/// captures in several runs keeps each. What it took and missed, it returns to the run's launcher.
/// </summary>
public sealed class TimedCaptures(ICaptureBackend backend, IToolRunner tools, string dir)
{
    private int _snapshots;

    /// <summary>The capture of one run; done at once, with a capture error, when the backend cannot take any here.</summary>
    public Task<RunFindings> Start(ContainedProcess p, Task trigger, TimedCapture timed, string label) =>
        backend.Unavailable is { } why
            ? Task.FromResult(RunFindings.Error($"{label}: {backend.Name}: {why}"))
            : CaptureSeriesAsync(p, trigger, timed, label, timed.Core ? new LinuxProcDump(tools) : null);

    private async Task<RunFindings> CaptureSeriesAsync(ContainedProcess p, Task trigger, TimedCapture timed, string label, ICaptureBackend? core)
    {
        var captures = Path.Combine(dir, "captures");
        var found = new RunFindings();
        void Missed(string why, string? by = null) => found.CaptureErrors.Add($"{label}: {by ?? backend.Name}: {why}");
        var exited = Task.Run(async () => { while (!p.HasExited) await Task.Delay(50); });
        if (await Task.WhenAny(trigger, exited) != trigger)
        {
            Missed($"none of {timed.Count} snapshots taken: the process ended before '{timed.Marker}'");
            return found;
        }
        // The delay counts on the run's own clock: on the CPU clock a starved run is not dumped before it has had the
        // CPU the delay gives it (a fixed compile that the host slows would otherwise meet its snapshot as it ends).
        var (markerAt, markerClock) = (p.Elapsed, p.ClockNow);
        var unit = p.OnCpuClock ? " s of CPU" : " s";
        double Since() => p.ClockNow - markerClock;
        string? how = null;
        if (timed.MemoryMB is { } mb)
        {
            // procdump -M: at the threshold, or after delaySec when the memory never gets there.
            long now = 0;
            while (!p.HasExited && Since() < timed.DelaySec)
            {
                try { now = p.MemoryNow(); }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException or Win32Failure)
                {
                    if (p.HasExited) break;   // the run ended as it was read
                    Missed($"none of {timed.Count} snapshots taken: the run's memory cannot be read for the {mb} MB trigger: {e.Message}");
                    return found;
                }
                if (now >= (long)mb << 20) break;
                await Task.Delay(50);
            }
            // procdump -M: a run that ends below the threshold was never meant to be dumped.
            if (p.HasExited) return found;
            how = now >= (long)mb << 20 ? $"memory {now >> 20} MB ≥ {mb} MB, {Since():0.0}{unit} after the marker"
                : $"memory stayed at {now >> 20} MB < {mb} MB: taken {timed.DelaySec}{unit} after the marker";
        }
        else if (p.OnCpuClock)
            while (!p.HasExited && Since() < timed.DelaySec) await Task.Delay(50);
        else await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.DelaySec)), exited);
        Directory.CreateDirectory(captures);
        var (taken, walked, retakes) = (0, 0, 0);
        // Read one snapshot (and keep it) once it was taken; a read that fails is a capture error like a take that does.
        async Task ReadAsync(int i, Func<Task<CaptureRecord>> read, string? first)
        {
            try
            {
                var record = await read();
                var note = string.Join("; ", new[] { first, record.Short is { } shortBy ? $"short: {shortBy}" : null, record.Note }.OfType<string>());
                found.Captures.Add(record with { Run = label, Note = note.Length == 0 ? null : note });
                taken++;
                if (record.Short is null) walked++;
            }
            catch (Exception e) { Missed($"snapshot {i}: {e.Message}"); }
        }
        // The count asked for, on schedule; they are read after the last one (and the core), not between them.
        var due = new List<(int I, Func<Task<CaptureRecord>> Read, string? Note)>();
        var tried = 0;
        for (var i = 0; !p.HasExited && i < timed.Count; i++)
        {
            if (i > 0 && await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.IntervalSec)), exited) == exited) break;
            tried++;
            try { due.Add((i, await backend.TakeAsync(p, captures, Interlocked.Increment(ref _snapshots) - 1, CancellationToken.None), i == 0 ? how : null)); }
            catch (Exception e) { Missed($"snapshot {i}: {e.Message}"); }
        }
        var ended = p.HasExited ? p.Elapsed - markerAt : (double?)null;
        // The core too before the reads: it also needs the live process.
        var coreRecord = await TakeCoreAsync();
        foreach (var (i, read, note) in due) await ReadAsync(i, read, note);
        // Retakes while every snapshot so far came out short and the run lives, each read at once: the next depends on it.
        for (var i = timed.Count; walked == 0 && taken > 0 && retakes < timed.Retakes && !p.HasExited; i++)
        {
            if (await Task.WhenAny(Task.Delay(TimeSpan.FromSeconds(timed.IntervalSec)), exited) == exited) break;
            retakes++;
            try
            {
                var read = await backend.TakeAsync(p, captures, Interlocked.Increment(ref _snapshots) - 1, CancellationToken.None);
                await ReadAsync(i, read, $"retake {retakes} of {timed.Retakes}: the {taken} before came out short");
            }
            catch (Exception e) { Missed($"snapshot {i}: {e.Message}"); }
        }
        if (taken > 0 && walked == 0 && retakes > 0)
            Missed($"all {taken} snapshots came out short ({retakes} of them retakes): none carried a stack that could be walked");
        // The loop stops short only when the process ended.
        if (tried < timed.Count)
            Missed($"{due.Count} of {timed.Count} snapshots taken: the process ended {ended:0.00} s after the marker "
                   + $"(delay {timed.DelaySec}{unit}, interval {timed.IntervalSec} s)");
        if (coreRecord is not null) found.Captures.Add(coreRecord with { Run = label });
        return found;

        async Task<CaptureRecord?> TakeCoreAsync()
        {
            if (core is null) return null;
            if (p.HasExited)
            {
                Missed("core not taken: the process had ended", core.Name);
                return null;
            }
            if (core.Unavailable is { } why)
            {
                Missed(why, core.Name);
                return null;
            }
            try { return await Task.Run(() => core.SnapshotAsync(p, captures, Interlocked.Increment(ref _snapshots) - 1, CancellationToken.None)); }
            catch (Exception e)
            {
                Missed(e.Message, core.Name);
                return null;
            }
        }
    }
}
