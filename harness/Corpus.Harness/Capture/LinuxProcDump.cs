using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>Debian's procdump (Sysinternals ProcDump for Linux 1.2): a native core written through gdb.</summary>
public sealed class LinuxProcDump(IToolRunner runner, string exe = "procdump") : ICaptureBackend
{
    public string Name => "procdump";

    public string? Unavailable => OperatingSystem.IsLinux() && Subjects.SubjectKinds.Which(exe) is not null
        ? null : "Debian's procdump is not installed (make setup installs it)";

    /// <summary>One core now: -n 1 with the default timer trigger.</summary>
    public static IReadOnlyList<string> SnapshotArgs(int pid, string prefix) =>
        ["-n", "1", "-s", "1", "-o", prefix, "-p", pid.ToString()];

    /// <summary>-M: a core when memory commit reaches the threshold.</summary>
    public static IReadOnlyList<string> MemoryArgs(int pid, string prefix, int megabytes) =>
        ["-M", megabytes.ToString(), "-n", "1", "-o", prefix, "-p", pid.ToString()];

    public Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var prefix = Path.Combine(dir, $"core-{index}");
        var at = target.Elapsed;
        var r = runner.Run(exe, SnapshotArgs(target.Pid, prefix), TimeSpan.FromMinutes(5));
        // procdump names the file prefix_<counter>.<pid>.
        var file = Directory.GetFiles(dir, $"core-{index}_*").FirstOrDefault();
        if (file is null) throw new InvalidOperationException(r.Describe("procdump"));
        return Task.FromResult(new CaptureRecord(Name, file, new FileInfo(file).Length, r.Seconds, at, []));
    }
}
