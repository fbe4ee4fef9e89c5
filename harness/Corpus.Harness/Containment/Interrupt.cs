using System.Runtime.InteropServices;

namespace Corpus.Harness.Containment;

/// <summary>
/// SIGINT/SIGTERM of the harness, process-wide. Every contained run watches it: a running one kills its tree and
/// cgroup and throws OperationCanceledException, and a new one refuses to start. The runner turns that into an
/// `error` cell, and `corpus run` stops, marks the cell interrupted and writes what it has.
/// </summary>
public static class Interrupt
{
    private static readonly CancellationTokenSource Source = new();
    private static int _signal, _runs, _processes, _cgroups;

    public static CancellationToken Token => Source.Token;
    public static bool IsRequested => Source.IsCancellationRequested;
    /// <summary>2 (SIGINT) or 15 (SIGTERM); the exit code is 128 + this.</summary>
    public static int Signal => _signal;
    public static string SignalName => _signal == Native.SIGTERM ? "SIGTERM" : "SIGINT";

    /// <summary>Watch SIGINT and SIGTERM. A second signal is not caught: the harness dies and its supervisor cleans up.</summary>
    public static IDisposable Register()
    {
        var regs = new[] { PosixSignal.SIGINT, PosixSignal.SIGTERM }.Select(s => PosixSignalRegistration.Create(s, ctx =>
        {
            if (IsRequested) return;
            ctx.Cancel = true;
            Request(ctx.Signal == PosixSignal.SIGTERM ? Native.SIGTERM : Native.SIGINT);
        })).ToList();
        return new Registrations(regs);
    }

    public static void Request(int signal)
    {
        Interlocked.CompareExchange(ref _signal, signal, 0);
        Source.Cancel();
    }

    public static void ThrowIfRequested()
    {
        if (IsRequested) throw new OperationCanceledException($"interrupted by {SignalName}", Token);
    }

    internal static void Stopped(int processes)
    {
        Interlocked.Increment(ref _runs);
        Interlocked.Add(ref _processes, processes);
    }

    internal static void CgroupRemoved() => Interlocked.Increment(ref _cgroups);

    /// <summary>What the interrupt cleaned, for the one line `corpus run` prints.</summary>
    public static string Cleaned =>
        $"stopped {_runs} run(s), killed {_processes} process(es), "
        + (IHost.Current.Ledgered ? $"removed {_cgroups} run cgroup(s)" : "terminated their Job Object(s)");

    private sealed class Registrations(List<PosixSignalRegistration> regs) : IDisposable
    {
        public void Dispose() { foreach (var r in regs) r.Dispose(); }
    }
}
