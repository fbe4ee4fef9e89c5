namespace Corpus.Harness.Containment;

/// <summary>How one run ended, as its operating system tells it.</summary>
/// <param name="PeakBytes">The kernel's own peak for the run (cgroup or job), 0 where it keeps none.</param>
/// <param name="MemoryCapped">The kernel stopped the run at its memory cap (OOM kill, job limit).</param>
internal sealed record SessionEnd(int? ExitCode, string? Signal, long PeakBytes, bool MemoryCapped)
{
    /// <summary>A run on the CPU clock: the CPU seconds all its processes used; null otherwise.</summary>
    public double? CpuSeconds { get; init; }
}

/// <summary>
/// One run's operating-system half, behind <see cref="ContainedProcess"/>: the Linux session and memory cgroup
/// (<see cref="CgroupSession"/>) or the Windows Job Object (<see cref="WindowsJob"/>). It starts the program,
/// reads its memory, kills its whole tree and says how it ended; timing, output and sampling are the facade's.
/// </summary>
internal interface IRunSession : IDisposable
{
    int Pid { get; }
    /// <summary>What contains the run, for the run's record.</summary>
    string Containment { get; }
    bool HasExited { get; }
    Task WaitForExitAsync();
    /// <summary>The run's memory now: cgroup usage, the session's RSS, or the job's commit.</summary>
    long MemoryNow();
    /// <summary>The CPU seconds of every process of the run so far, ended ones included; null where the host keeps no count.</summary>
    double? CpuSeconds();
    /// <summary>Whether the run is over its memory cap and the kernel did not end it by itself (the caller kills it).</summary>
    bool OverMemoryCap(long used);
    /// <summary>Kills at once, on the interrupt's own thread; how many processes that were.</summary>
    int Stop();
    void KillTree();
    /// <summary>After the program exited or was killed: kills the rest, drains the output, reads the status.</summary>
    SessionEnd Finish();
}
