using Corpus.Harness.Containment;
using Corpus.LostMemory;

namespace Corpus.Harness.Signatures.Leaks;

/// <summary>What a leak measure read at the program's marker: the objects it holds that nothing maps.</summary>
/// <param name="CellBytes">The cell's figure at the marker, when the meter reads it there rather than from the counter.</param>
public sealed record HeldAtMarker(int Objects, long Bytes, long MappedBytes, string? Problem, IReadOnlyList<LeakHolder>? HeldBy,
                                  long? CellBytes = null);

/// <summary>
/// Where the memory that belongs to no process is read, on each operating system: <see cref="LinuxLeakMeter"/> (the
/// cell's memory cgroup and the lost-memory finder) and <see cref="WindowsLeakMeter"/> (the handle table's page-file
/// sections). <see cref="ShmemProbe"/> samples and judges through it.
/// </summary>
public interface ILeakMeter
{
    /// <summary>Host-wide shared memory (Linux's Shmem, Windows' commit charge): context only.</summary>
    long HostBytes();

    /// <summary>The process's resident memory (RSS, or the working set).</summary>
    long RssBytes(int pid);

    /// <summary>The cell's own shared memory now, against the host's figure at the start.</summary>
    long CellBytes(ContainedProcess p, long hostBaseline);

    /// <summary>At the marker: what the program holds that no view maps.</summary>
    HeldAtMarker Held(ContainedProcess p);

    /// <summary>The cell's shared memory once its processes are gone (what must be none).</summary>
    long AfterBytes(ContainedProcess p, long hostBaseline);

    /// <summary>Where the cell's figures come from, for the record.</summary>
    string Attribution(ContainedProcess p);

    /// <summary>The name of the cell's curve in the report's time plot.</summary>
    string CellCurve { get; }

    /// <summary>Whether that curve samples the same figure the measure reads (the cell's cgroup shmem), so its samples
    /// around the measure show how much the figure moved; on Windows the curve is host-wide commit, context only.</summary>
    bool SamplesTheCell { get; }

    /// <summary>Whether this meter reads Windows' sections (the facts and the key figures say it so).</summary>
    bool Windows { get; }

    /// <summary>The measure in one line, for the verdict's detail.</summary>
    string Describe(LeakMeasure m, HeldAtMarker? held);

    public static ILeakMeter ForThisHost() => OperatingSystem.IsWindows() ? new WindowsLeakMeter() : new LinuxLeakMeter();
}

/// <summary>Linux: the shared memory charged to the cell's memory cgroup, and the lost-memory finder over its processes.</summary>
public sealed class LinuxLeakMeter : ILeakMeter
{
    public bool Windows => false;
    public string CellCurve => "cell shmem (MB)";
    public bool SamplesTheCell => true;

    public long HostBytes() => ProcKb("/proc/meminfo", "Shmem:") * 1024;
    public long RssBytes(int pid) => ProcKb($"/proc/{pid}/status", "VmRSS:") * 1024;

    public long CellBytes(ContainedProcess p, long hostBaseline) =>
        p.Cgroup is { } cg ? cg.StatBytes("shmem") : HostBytes() - hostBaseline;

    public long AfterBytes(ContainedProcess p, long hostBaseline) => CellBytes(p, hostBaseline);

    /// <summary>The program and every other process of the run's cgroup (under Wine: wineserver and Wine's services), so
    /// each object the program holds names all its holders; without a cgroup, the program alone.</summary>
    public HeldAtMarker Held(ContainedProcess p)
    {
        var cell = (p.Cgroup?.Members() ?? []).Append(p.Pid).ToHashSet();
        var report = Scanner.Scan(new ScanOptions { Pid = p.Pid, Pids = cell, IncludeSelf = false });
        var entry = report.Processes.FirstOrDefault(e => e.Pid == p.Pid);
        return new HeldAtMarker(entry?.FdOnlyCount ?? 0, entry?.FdOnlySizeBytes ?? 0, -1, null, LeakHolder.Of(entry));
    }

    public string Attribution(ContainedProcess p) => p.Cgroup is { } cg ? $"cgroup {cg.Dir}" : "host-wide Shmem (no memory cgroup here)";

    public string Describe(LeakMeasure m, HeldAtMarker? held) =>
        $"cell shmem {(m.ShmemDeltaBytes >= 0 ? "+" : "")}{Mb(m.ShmemDeltaBytes)}, RSS {Mb(m.RssBytes)}, "
        + $"{m.HeldObjects} unmapped objects held by fd ({Mb(m.HeldFdOnlyBytes)}), after exit {Mb(m.AfterExitDeltaBytes)}";

    internal static string Mb(long b) => $"{b / 1048576.0:0.0} MB";

    private static long ProcKb(string file, string key)
    {
        try
        {
            var line = File.ReadLines(file).FirstOrDefault(l => l.StartsWith(key));
            return line is null ? 0 : long.Parse(line[key.Length..].Trim().Split(' ')[0]);
        }
        catch (IOException) { return 0; }
    }
}

/// <summary>
/// Windows: no per-cell counter of section pages. The cell's figure is what the run's process holds: the page-file-backed
/// sections it has handles to, from the system handle table (<see cref="WindowsSections"/>); RSS is its working set; the
/// system commit charge (GetPerformanceInfo) is host-wide context. After the run, the sections any process left in the
/// run's Job Object still holds must be none.
/// </summary>
public sealed class WindowsLeakMeter : ILeakMeter
{
    public bool Windows => true;
    public string CellCurve => "system commit - baseline (MB), context";
    public bool SamplesTheCell => false;

    public long HostBytes() => WindowsNative.CommitTotalBytes();
    public long RssBytes(int pid) => WindowsNative.Counters(pid)?.WorkingSet ?? 0;
    public long CellBytes(ContainedProcess p, long hostBaseline) => HostBytes() - hostBaseline;
    public long AfterBytes(ContainedProcess p, long hostBaseline) => (p.JobMembers ?? []).Sum(pid => WindowsSections.Of(pid).SectionBytes);

    public HeldAtMarker Held(ContainedProcess p)
    {
        var held = WindowsSections.Of(p.Pid);
        return new HeldAtMarker(held.Sections, held.SectionBytes, held.MappedBytes, held.Problem, null, held.SectionBytes);
    }

    public string Attribution(ContainedProcess p) =>
        "page-file-backed sections the process holds by handle (system handle table, NtQuerySection); the system commit "
        + "charge is host-wide context" + (WindowsNative.WineVersion() is { } wine
            ? $" (under Wine {wine} it is computed from Linux's /proc/meminfo, where section pages are Cached, counted as free)" : "");

    public string Describe(LeakMeasure m, HeldAtMarker? held) =>
        $"working set {LinuxLeakMeter.Mb(m.RssBytes)}, {m.HeldObjects} page-file sections held by handle ({LinuxLeakMeter.Mb(m.HeldFdOnlyBytes)}), "
        + $"mapped views {LinuxLeakMeter.Mb(held?.MappedBytes ?? -1)}, system commit {(m.HostShmemDeltaBytes >= 0 ? "+" : "")}{LinuxLeakMeter.Mb(m.HostShmemDeltaBytes)} (context)"
        + (held?.Problem is { } problem ? $" ({problem})" : "") + $", after exit {LinuxLeakMeter.Mb(m.AfterExitDeltaBytes)}";
}
