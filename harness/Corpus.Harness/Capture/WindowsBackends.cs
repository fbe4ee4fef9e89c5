using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>
/// Sysinternals procdump.exe on Windows. Not exercised on the Linux machines this corpus runs on: its command
/// lines are checked by unit tests with a fake runner, and the backend reports itself unavailable elsewhere.
/// </summary>
public sealed class WindowsProcDump(IToolRunner runner, string exe = "procdump.exe", bool? isWindows = null) : ICaptureBackend
{
    public string Name => "procdump.exe";
    public string? Unavailable => isWindows ?? OperatingSystem.IsWindows() ? null : "procdump.exe runs only on Windows";

    /// <summary>-s/-n: a full dump every interval seconds, count times.</summary>
    public static IReadOnlyList<string> TimedArgs(int pid, string dir, int intervalSec, int count) =>
        ["-accepteula", "-ma", "-s", intervalSec.ToString(), "-n", count.ToString(), pid.ToString(), dir];

    /// <summary>-e -x: launch and dump on an unhandled exception (a crash).</summary>
    public static IReadOnlyList<string> CrashArgs(string dir, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-ma", "-e", "-x", dir, program, .. args];

    /// <summary>-m: a full dump when commit exceeds the threshold.</summary>
    public static IReadOnlyList<string> MemoryArgs(int pid, string dir, int megabytes) =>
        ["-accepteula", "-ma", "-m", megabytes.ToString(), pid.ToString(), dir];

    public Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var file = Path.Combine(dir, $"snapshot-{index}.dmp");
        var r = runner.Run(exe, ["-accepteula", "-ma", target.Pid.ToString(), file], TimeSpan.FromMinutes(5));
        if (r.ExitCode != 1 && r.ExitCode != 0) throw new InvalidOperationException(r.Describe(exe));
        var bytes = File.Exists(file) ? new FileInfo(file).Length : 0;
        return Task.FromResult(new CaptureRecord(Name, file, bytes, r.Seconds, target.Elapsed, []));
    }
}

/// <summary>Time Travel Debugging on Windows (TTD.exe); the Linux counterpart is gdb 'record full'.</summary>
public static class WindowsTtd
{
    public static string? Unavailable => OperatingSystem.IsWindows() ? null : "TTD.exe runs only on Windows";

    public static IReadOnlyList<string> LaunchArgs(string dir, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-out", dir, "-launch", program, .. args];

    /// <summary>A ring buffer keeps long runs bounded: only the last maxFileMB of the trace survive.</summary>
    public static IReadOnlyList<string> RingArgs(string dir, int maxFileMB, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-ring", "-maxFile", maxFileMB.ToString(), "-out", dir, "-launch", program, .. args];
}
