using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>Debian's procdump (Sysinternals ProcDump for Linux 1.2): a native core written through gdb.</summary>
public sealed class LinuxProcDump(IToolRunner runner, string exe = "procdump") : ICaptureBackend
{
    public string Name => "procdump";

    public string? Unavailable => IHost.Current.Platform == IHost.Linux && Subjects.SubjectKinds.Which(exe) is not null
        ? null : "Debian's procdump is not installed (make setup installs it)";

    /// <summary>One core now: -n 1 with the default timer trigger.</summary>
    public static IReadOnlyList<string> SnapshotArgs(int pid, string prefix) =>
        ["-n", "1", "-s", "1", "-o", prefix, "-p", pid.ToString()];

    /// <summary>-M: a core when memory commit reaches the threshold.</summary>
    public static IReadOnlyList<string> MemoryArgs(int pid, string prefix, int megabytes) =>
        ["-M", megabytes.ToString(), "-n", "1", "-o", prefix, "-p", pid.ToString()];

    /// <summary>
    /// procdump 1.2 takes a process for .NET when any socket in /proc/net/unix starts with $TMPDIR (the pid is not part
    /// of the match), and then asks that socket's runtime for the dump: with the corpus's TMPDIR, which holds the
    /// harness's own diagnostic socket, it dumped the harness and named the core after the target. So its TMPDIR is the
    /// captures folder, where no socket lives, it writes through gdb, and the core must name the target.
    /// </summary>
    public Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var prefix = Path.Combine(dir, $"core-{index}");
        var at = target.Elapsed;
        var r = runner.Run("env", [$"TMPDIR={dir}", exe, .. SnapshotArgs(target.Pid, prefix)], TimeSpan.FromMinutes(5));
        // procdump names the file prefix_<counter>.<pid>.
        var file = Directory.GetFiles(dir, $"core-{index}_*").FirstOrDefault();
        if (file is null) throw new InvalidOperationException(r.Describe("procdump"));
        if (CoreFile.ProcessOf(file) is not { } of)
            throw new InvalidOperationException($"procdump wrote {Path.GetFileName(file)}, which is not a core file");
        if (of.Pid != target.Pid)
        {
            File.Delete(file);   // another process's memory: not evidence, and not ours to keep
            throw new InvalidOperationException($"procdump dumped pid {of.Pid} ({of.Command}), not the target {target.Pid}");
        }
        return Task.FromResult(new CaptureRecord(Name, file, new FileInfo(file).Length, r.Seconds, at, []));
    }
}
