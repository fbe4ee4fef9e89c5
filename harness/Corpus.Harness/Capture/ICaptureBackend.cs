using System.Diagnostics;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

public sealed record ThreadStack(string Thread, IReadOnlyList<string> Frames)
{
    /// <summary>The thread whose fault or abort a crash capture holds.</summary>
    public bool Crashing { get; init; }

    /// <summary>At least one named frame: the unwinder got somewhere (ClrMD gives a lone "[Managed] 0x0" when it did not).</summary>
    public bool Walked => Frames.Any(f => !f.StartsWith("[Managed] 0x", StringComparison.Ordinal) && !f.StartsWith("[Runtime] ", StringComparison.Ordinal));
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

    /// <summary>
    /// Why this snapshot came out short, or null: it has threads, and none of them could be walked, so it says nothing
    /// about where the program was. A capture that can still be taken again is (<see cref="TimedCapture.Retakes"/>).
    /// </summary>
    public string? Short => Threads.Count > 0 && !Threads.Any(t => t.Walked)
        ? $"none of its {Threads.Count} threads carried a stack that could be walked" : null;
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

    /// <summary>
    /// A snapshot in two steps: the part that needs the live process, awaited here, and the reading of what it wrote,
    /// returned to be run later. A timed series reads its snapshots after the last one, so the reading does not spend
    /// the program's time after the marker (createdump's ClrMD read: about 1 s a snapshot under load, while the
    /// program runs on). Backends that read as they take do both here.
    /// </summary>
    async Task<Func<Task<CaptureRecord>>> TakeAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var record = await SnapshotAsync(target, dir, index, cancel);
        return () => Task.FromResult(record);
    }
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

/// <summary>
/// Runs a tool (cmake, dotnet build, gdb, createdump, winedbg, reg) and waits for it. On Linux the tool leads its own
/// process group (setsid), listed with the supervisor as "tool PGID START" while it runs, so a killed harness takes a
/// tool in the middle of a long read with it, and a timeout kills whatever the tool started.
/// </summary>
public sealed class ToolRunner : IToolRunner
{
    public static readonly ToolRunner Instance = new();

    public ToolResult Run(string file, IReadOnlyList<string> args, TimeSpan timeout)
    {
        // A tool that is not there fails as Process.Start fails (Win32Exception), not as setsid's exit 127.
        string? path = null;
        if (IHost.Current.UnixSignals) path = Executable(file);   // setsid leads the tool's own process group
        var psi = new ProcessStartInfo(path is null ? file : "setsid")
        {
            RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true,
            UseShellExecute = false,
        };
        if (path is not null) psi.ArgumentList.Add(path);
        foreach (var a in args) psi.ArgumentList.Add(a);
        if (path is not null) Supervisor.Ready();
        var clock = Stopwatch.StartNew();
        // Null when Windows started nothing it can hand back (under Wine: a Linux executable found through Z:).
        using var p = Process.Start(psi) ?? throw new System.ComponentModel.Win32Exception($"{file}: no process was started");
        // setsid execs the tool in place (a child of .NET leads no group, so it need not fork): the pid is the group's.
        string? entry = path is null ? null : LedgerEntry.Format("tool", p.Id.ToString(), ProcStat.StartTime(p.Id)?.ToString() ?? "");
        if (entry is not null) Supervisor.Add(entry);
        try
        {
            p.StandardInput.Close();
            var stdout = new Drain(p.StandardOutput);
            var stderr = new Drain(p.StandardError);
            var done = p.WaitForExit(timeout);
            if (!done)
            {
                if (entry is not null) Native.Kill(-p.Id, Native.SIGKILL);
                p.Kill(entireProcessTree: true);
            }
            p.WaitForExit();
            // A process the tool started may keep its pipes open after it ended (Wine's services, started by the
            // first reg.exe of a prefix, inherit its stderr and live on): its output is what came by then, not a
            // wait for an end of file that never comes.
            var held = !Task.WaitAll([stdout.Task, stderr.Task], DrainAfterExit);
            var err = stderr.Text;
            if (held)
            {
                if (entry is not null) Native.Kill(-p.Id, Native.SIGKILL);
                err += $"\n(the tool's output stayed open {DrainAfterExit.TotalSeconds:0} s after it ended: processes it started hold it)";
            }
            // setsid could not exec it (no executable format): what Process.Start would have thrown.
            if (entry is not null && p.ExitCode is 126 or 127 && err.StartsWith("setsid: failed to execute"))
                throw new System.ComponentModel.Win32Exception($"{file}: {err.Trim()}");
            return new ToolResult(done ? p.ExitCode : -1, stdout.Text, err, Math.Round(clock.Elapsed.TotalSeconds, 3), !done);
        }
        finally
        {
            if (entry is not null) Supervisor.Remove(entry);
        }
    }

    /// <summary>How long a tool's output is read after the tool ended, for what its own last writes left in the pipe.</summary>
    public static readonly TimeSpan DrainAfterExit = TimeSpan.FromSeconds(5);

    /// <summary>A pipe read to its end in the background; <see cref="Text"/> is what has come so far.</summary>
    private sealed class Drain
    {
        private readonly System.Text.StringBuilder _text = new();
        public Task Task { get; }

        public Drain(StreamReader reader) => Task = System.Threading.Tasks.Task.Run(async () =>
        {
            var buffer = new char[8192];
            try
            {
                for (int n; (n = await reader.ReadAsync(buffer)) > 0;)
                    lock (_text) _text.Append(buffer, 0, n);
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException) { }   // disposed with the process
        });

        public string Text { get { lock (_text) return _text.ToString(); } }
    }

    /// <summary>The executable a file name stands for (a path, or the first match on PATH); null when there is none.</summary>
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    private static string? Executable(string file)
    {
        static bool IsExecutable(string f) =>
            File.Exists(f) && (File.GetUnixFileMode(f) & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0;
        if (file.Contains('/')) return IsExecutable(file) ? file : null;
        foreach (var dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries))
            if (Path.Combine(dir, file) is var f && IsExecutable(f)) return f;
        return null;
    }
}
