using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// Evidence families and the metrics they leave in a cell. A family's check runs only once the main family says
/// "reproduced", and turns a reproduction without its evidence into a wrong-failure.
/// </summary>
internal static class Evidence
{
    /// <summary>Every evidence family the signature names, on a reproduction.</summary>
    internal static void Check(Signature sig, CellResult cell, ICaptureBackend backend)
    {
        CheckStacks(sig, cell);
        CheckHeap(sig, cell, backend.HeapFacts);
        LostUpdateEvidence.Check(sig, cell, cell.HitRun);
        if (cell.HitRun is { } hit) CheckDoubleFree(sig, cell, hit);
        else if (sig.DoubleFree is not null)
        {
            cell.Outcome = Outcome.WrongFailure;
            cell.Detail += "; but no hit run to read double-free facts from";
        }
    }

    /// <summary>Stack facts: a reproduction must also show the hot path in a snapshot, when the case asks for it.</summary>
    internal static void CheckStacks(Signature sig, CellResult cell)
    {
        if (sig.Stacks is null) return;
        var re = new Regex(sig.Stacks.Frame);
        var hits = cell.Captures.SelectMany(c => c.Threads.Select(t => (c, t)))
                       .Where(x => x.t.Frames.Any(f => re.IsMatch(f))).ToList();
        cell.Metrics["stack_hits"] = $"{hits.Select(h => h.c).Distinct().Count()}/{cell.Captures.Count(c => c.Threads.Count > 0)} snapshots";
        if (hits.Count > 0)
        {
            var (c, t) = hits[0];
            cell.Metrics["hot_frames"] = t.Frames.Take(6).ToList();
            cell.Detail += $"; snapshot {Path.GetFileName(c.File)} shows /{sig.Stacks.Frame}/ on thread '{t.Thread}'";
            return;
        }
        cell.Outcome = Outcome.WrongFailure;
        cell.Detail += cell.Captures.Count == 0
            ? $"; but no stack snapshot was taken ({string.Join("; ", cell.CaptureErrors)})"
            : $"; but no snapshot shows /{sig.Stacks.Frame}/";
    }

    /// <summary>Heap facts: a reproduction must show the expected number of live instances in a heap capture.</summary>
    internal static void CheckHeap(Signature sig, CellResult cell, bool heapPossible)
    {
        if (sig.Heap is not { } heap) return;
        var heaps = cell.Captures.Where(c => c.HeapCounts is not null).ToList();
        if (heaps.Count == 0)
        {
            // Only backends with heap facts (CoreCLR's createdump) can be judged; elsewhere the family has nothing to say.
            if (!heapPossible)
            {
                cell.Metrics["heap_instances"] = "not judged: this subject's captures carry no heap facts";
                return;
            }
            cell.Outcome = Outcome.WrongFailure;
            cell.Detail += $"; but the heap capture the signature needs was not taken ({string.Join("; ", cell.CaptureErrors)})";
            return;
        }
        var seen = heaps[^1].HeapCounts!.GetValueOrDefault(heap.Type);
        cell.Metrics["heap_instances"] = $"{seen} {heap.Type}";
        if (seen == heap.Count)
        {
            cell.Detail += $"; the heap holds {seen} live {heap.Type}";
            return;
        }
        cell.Outcome = Outcome.WrongFailure;
        cell.Detail += $"; but the heap holds {seen} {heap.Type}, not {heap.Count}";
    }

    /// <summary>Double-free facts: a crash is this bug only if the core shows the same pointer freed by two threads.</summary>
    internal static void CheckDoubleFree(Signature sig, CellResult cell, string label)
    {
        if (sig.DoubleFree is not { } spec) return;
        FreelogAnalysis? facts;
        lock (cell.CrashFacts) cell.CrashFacts.TryGetValue(label, out facts);
        var why = facts is null ? $"no crash facts for {label} ({string.Join("; ", cell.CaptureErrors)})" : facts.Mismatch(spec);
        if (why is null)
        {
            var other = facts!.OtherFree(spec)!;
            cell.Metrics["double_free"] = $"{facts.Pointer} freed on LWP {other.Thread} then on LWP {facts.CrashThread}";
            var aborting = facts.Frees.Last(f => f.Aborting);
            static string Path(FreeRecord f) => string.Join(" ← ", f.Frames.Where(x => !x.StartsWith("(wrapper")).Take(3).Select(x => x.Split(' ')[0]));
            cell.Detail += $"; {facts.Pointer} was freed by LWP {other.Thread} ({Path(other)}), then again by the crashing "
                           + $"LWP {facts.CrashThread} ({Path(aborting)})";
            return;
        }
        cell.Outcome = Outcome.WrongFailure;
        cell.Detail += $"; but not this double free: {why}";
    }

    internal static void RecordLeak(CellResult cell, LeakMeasure m)
    {
        static double Mb(long b) => Math.Round(b / 1048576.0, 1);
        cell.Metrics["shmem_delta_mb"] = Mb(m.ShmemDeltaBytes);
        cell.Metrics["host_shmem_delta_mb"] = Mb(m.HostShmemDeltaBytes);
        cell.Metrics["shmem_attribution"] = m.Attribution;
        cell.Metrics["rss_mb"] = Mb(m.RssBytes);
        cell.Metrics["held_objects"] = m.HeldObjects;
        cell.Metrics["held_fd_only_mb"] = Mb(m.HeldFdOnlyBytes);
        cell.Metrics["after_exit_delta_mb"] = Mb(m.AfterExitDeltaBytes);
        cell.Metrics["shmem_baseline_mb"] = Mb(m.BaselineBytes);
        // On Windows the sampled figure is the system commit charge, host-wide context (ShmemProbe).
        cell.TimeSeries[OperatingSystem.IsWindows() ? "system commit - baseline (MB), context" : "cell shmem (MB)"] = m.Samples.Select(x => new SeriesPoint(x.T, Mb(x.Shmem))).ToList();
        if (m.HostSamples is { } host)
            cell.TimeSeries["host Shmem - baseline (MB), context"] = host.Select(x => new SeriesPoint(x.T, Mb(x.Shmem))).ToList();
        cell.TimeSeries["process RSS (MB)"] = m.Samples.Select(x => new SeriesPoint(x.T, Mb(x.Rss))).ToList();
    }

    internal static Rate RecordRate(CellResult cell, int hits, int runs, double seconds, int needed)
    {
        var rate = RaceStatistics.Wilson(hits, runs);
        cell.Metrics["hits"] = hits;
        cell.Metrics["runs"] = runs;
        cell.Metrics["rate"] = Math.Round(rate.Point, 4);
        cell.Metrics["rate_ci95"] = new[] { Math.Round(rate.Low, 4), Math.Round(rate.High, 4) };
        cell.Metrics["runs_for_clean"] = needed;
        if (hits == 0) cell.Metrics["p_upper95"] = Math.Round(RaceStatistics.UpperBoundAfterZeroHits(runs), 4);
        cell.Metrics["race_s"] = Math.Round(seconds, 1);
        cell.Metrics["s_per_run"] = runs == 0 ? 0 : Math.Round(seconds / runs, 3);
        return rate;
    }
}
