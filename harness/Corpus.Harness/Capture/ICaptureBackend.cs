using System.Diagnostics;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

public sealed record ThreadStack(string Thread, IReadOnlyList<string> Frames)
{
    /// <summary>The thread whose fault or abort a crash capture holds.</summary>
    public bool Crashing { get; init; }
}

/// <summary>One capture: what was written, how big it is and how long it took.</summary>
public sealed record CaptureRecord(string Backend, string File, long Bytes, double Seconds, double AtSeconds,
                                   IReadOnlyList<ThreadStack> Threads, string? Note = null,
                                   IReadOnlyDictionary<string, long>? HeapCounts = null)
{
    /// <summary>The run of the cell it was taken in (e.g. "capture-n400000", "run0012").</summary>
    public string? Run { get; init; }

    /// <summary>The file was deleted after it was read: over the cap for kept cores (the note says so).</summary>
    public bool DeletedOverCap { get; init; }
}

/// <summary>
/// procdump semantics behind one interface: a backend takes one snapshot of a live process; the timed series
/// (-s/-n), crash and memory triggers are scheduled by the caller.
/// </summary>
public interface ICaptureBackend
{
    string Name { get; }
    /// <summary>Null when usable here, otherwise why not.</summary>
    string? Unavailable { get; }
    /// <summary>Whether its snapshots can carry heap statistics (so a heap signature can be judged).</summary>
    bool HeapFacts => false;
    Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel);
}

/// <summary>Runs an external tool; an interface so the Windows command lines can be checked without Windows.</summary>
public interface IToolRunner
{
    ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout);
}

public sealed record ToolResult(int ExitCode, string Stdout, string Stderr, double Seconds, bool TimedOut)
{
    public string Describe(string what) =>
        TimedOut ? $"{what} timed out after {Seconds:0.0} s" : $"{what} exited {ExitCode}: {Stderr.Trim()} {Stdout.Trim()}".Trim();
}

public sealed class ToolRunner : IToolRunner
{
    public static readonly ToolRunner Instance = new();

    public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout)
    {
        var psi = new ProcessStartInfo(file)
        {
            RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var a in args) psi.ArgumentList.Add(a);
        var clock = Stopwatch.StartNew();
        // Null when Windows started nothing it can hand back (under Wine: a Linux executable found through Z:).
        using var p = Process.Start(psi) ?? throw new System.ComponentModel.Win32Exception($"{file}: no process was started");
        p.StandardInput.Close();
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        var done = p.WaitForExit(timeout);
        if (!done) p.Kill(entireProcessTree: true);
        p.WaitForExit();
        return new ToolResult(done ? p.ExitCode : -1, stdout.Result, stderr.Result,
                              Math.Round(clock.Elapsed.TotalSeconds, 3), !done);
    }
}
