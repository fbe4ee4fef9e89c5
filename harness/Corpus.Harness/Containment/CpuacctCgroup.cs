namespace Corpus.Harness.Containment;

/// <summary>
/// A run's own group in the cgroup v1 cpuacct hierarchy, for a run on the CPU clock where its memory cgroup is v1 (a v2
/// memory group counts CPU itself, in cpu.stat). The kernel charges the group every CPU nanosecond of its members,
/// ended ones included, so the count is the run's alone whatever else the host runs.
/// </summary>
public sealed class CpuacctCgroup : IDisposable
{
    public string Dir { get; }

    private CpuacctCgroup(string dir) => Dir = dir;

    /// <summary>Where this process's cpuacct hierarchy is mounted and where it sits in it, or null.</summary>
    private static string? Parent()
    {
        try
        {
            // "4:cpu,cpuacct:/a/b" in /proc/self/cgroup; the hierarchy's mount point from mountinfo (it is
            // /sys/fs/cgroup/cpuacct on some hosts, /sys/fs/cgroup/cpu,cpuacct on others).
            var own = File.ReadAllLines("/proc/self/cgroup").Select(l => l.Split(':', 3))
                          .FirstOrDefault(p => p.Length == 3 && p[1].Split(',').Contains("cpuacct"));
            if (own is null) return null;
            foreach (var line in File.ReadLines("/proc/self/mountinfo"))
            {
                // "… MOUNTPOINT OPTIONS … - cgroup cgroup rw,cpu,cpuacct"
                var halves = line.Split(" - ", 2);
                if (halves.Length != 2 || halves[1].Split(' ') is not ["cgroup", _, var super] || !super.Split(',').Contains("cpuacct"))
                    continue;
                var root = halves[0].Split(' ')[3];
                var mount = halves[0].Split(' ')[4];
                // The process's path is relative to the hierarchy's root; the mount shows the part under "root".
                var path = own[2].StartsWith(root) ? own[2][root.Length..] : own[2];
                return Path.Combine(mount, path.TrimStart('/'), MemoryCgroup.Prefix);
            }
        }
        catch (IOException) { }
        return null;
    }

    /// <param name="announce">Told the folder before it exists, as <see cref="MemoryCgroup.TryCreate"/> does.</param>
    public static CpuacctCgroup? TryCreate(string name, Action<string>? announce = null)
    {
        if (Parent() is not { } parent) return null;
        var dir = Path.Combine(parent, name);
        try
        {
            announce?.Invoke(dir);
            Directory.CreateDirectory(dir);
            if (File.Exists(Path.Combine(dir, "cpuacct.usage"))) return new CpuacctCgroup(dir);
            Directory.Delete(dir);
            return null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException) { return null; }
    }

    /// <summary>The CPU seconds its members used so far; null when the count cannot be read.</summary>
    public double? Seconds()
    {
        try { return long.TryParse(File.ReadAllText(Path.Combine(Dir, "cpuacct.usage")).Trim(), out var ns) ? ns / 1e9 : null; }
        catch (IOException) { return null; }
    }

    /// <summary>SIGKILL every member: on a host without a memory cgroup this group is the only list of the run's tree.</summary>
    public void KillAll() => MemoryCgroup.Open(Dir).KillAll(TimeSpan.FromSeconds(5));

    public void Dispose() => MemoryCgroup.Open(Dir).Remove();
}
