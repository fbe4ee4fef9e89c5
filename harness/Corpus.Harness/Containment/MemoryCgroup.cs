namespace Corpus.Harness.Containment;

/// <summary>
/// A memory cgroup for one run (v2 where the memory controller is delegated, else v1). The kernel enforces
/// the cap, and the cgroup's member list lets us kill a whole tree even after a double fork.
/// </summary>
public sealed class MemoryCgroup : IDisposable
{
    public const string Prefix = "corpus";
    public string Dir { get; }
    private readonly bool _v2;
    /// <summary>A cgroup v2 group: it counts its members' CPU too (<see cref="CpuSeconds"/>).</summary>
    public bool V2 => _v2;

    private MemoryCgroup(string dir, bool v2) { Dir = dir; _v2 = v2; }

    /// <summary>Where this process's corpus cgroups live, or null with the reason.</summary>
    public static (string? Parent, bool V2, string? Why) Locate()
    {
        string[] lines;
        try { lines = File.ReadAllLines("/proc/self/cgroup"); }
        catch (IOException e) { return (null, false, e.Message); }
        var v2Line = lines.FirstOrDefault(l => l.StartsWith("0::"));
        var v1Line = lines.FirstOrDefault(l => l.Split(':') is [_, var ctl, _] && ctl.Split(',').Contains("memory"));
        foreach (var (mount, line, v2) in new[] { ("/sys/fs/cgroup", v2Line, true), ("/sys/fs/cgroup/unified", v2Line, true),
                                                 ("/sys/fs/cgroup/memory", v1Line, false) })
        {
            if (line is null) continue;
            if (v2 && !(File.Exists(Path.Combine(mount, "cgroup.controllers"))
                        && File.ReadAllText(Path.Combine(mount, "cgroup.controllers")).Split(' ', '\n').Contains("memory")))
                continue;
            if (!v2 && !File.Exists(Path.Combine(mount, "memory.limit_in_bytes"))) continue;
            var own = line[(line.IndexOf(':', line.IndexOf(':') + 1) + 1)..].TrimStart('/');
            var parent = Path.Combine(mount, own, Prefix);
            try
            {
                Directory.CreateDirectory(parent);
                if (v2) TryWrite(Path.Combine(mount, own, "cgroup.subtree_control"), "+memory");
                return (parent, v2, null);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return (null, false, $"cannot create {parent}: {e.Message}");
            }
        }
        return (null, false, "no writable memory cgroup (v1 or v2) on this machine");
    }

    /// <param name="announce">Told the folder before it exists, so a harness killed right after the mkdir still has it on record.</param>
    public static MemoryCgroup? TryCreate(string name, long limitBytes, out string? why, Action<string>? announce = null)
    {
        var (parent, v2, reason) = Locate();
        why = reason;
        if (parent is null) return null;
        var dir = Path.Combine(parent, name);
        try
        {
            announce?.Invoke(dir);
            Directory.CreateDirectory(dir);
            var cg = new MemoryCgroup(dir, v2);
            if (v2)
            {
                File.WriteAllText(Path.Combine(dir, "memory.max"), limitBytes.ToString());
                TryWrite(Path.Combine(dir, "memory.swap.max"), "0");
            }
            else
            {
                File.WriteAllText(Path.Combine(dir, "memory.limit_in_bytes"), limitBytes.ToString());
                TryWrite(Path.Combine(dir, "memory.memsw.limit_in_bytes"), limitBytes.ToString());
            }
            return cg;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            why = $"cannot set up {dir}: {e.Message}";
            return null;
        }
    }

    private static void TryWrite(string file, string value)
    {
        try { File.WriteAllText(file, value); } catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
    }

    public IReadOnlyList<int> Members()
    {
        try
        {
            return File.ReadAllLines(Path.Combine(Dir, "cgroup.procs"))
                       .Select(l => int.TryParse(l, out var p) ? p : 0).Where(p => p > 0).ToList();
        }
        catch (IOException) { return []; }
    }

    /// <summary>One counter of memory.stat (e.g. "shmem", "file", "anon"; v1 calls anon "rss"), in bytes; 0 when absent.</summary>
    public long StatBytes(string key)
    {
        if (!_v2 && key == "anon") key = "rss";
        try
        {
            foreach (var line in File.ReadLines(Path.Combine(Dir, "memory.stat")))
                if (line.Split(' ') is [var k, var v] && k == key && long.TryParse(v, out var n)) return n;
        }
        catch (IOException) { }
        return 0;
    }

    /// <summary>v2: the CPU seconds of every member so far, ended ones included (cpu.stat is in every v2 group); null on v1.</summary>
    public double? CpuSeconds()
    {
        if (!_v2) return null;
        try
        {
            foreach (var line in File.ReadLines(Path.Combine(Dir, "cpu.stat")))
                if (line.Split(' ') is ["usage_usec", var v] && long.TryParse(v, out var us)) return us / 1e6;
        }
        catch (IOException) { }
        return null;
    }

    public long UsageBytes() => ReadLong(_v2 ? "memory.current" : "memory.usage_in_bytes");

    public long PeakBytes() => _v2 ? ReadLong("memory.peak") : ReadLong("memory.max_usage_in_bytes");

    /// <summary>Whether the kernel killed something here for exceeding the cap.</summary>
    public bool OomKilled()
    {
        var file = Path.Combine(Dir, _v2 ? "memory.events" : "memory.oom_control");
        try
        {
            return File.ReadAllLines(file).Select(l => l.Split(' '))
                       .Any(p => p.Length == 2 && p[0] == "oom_kill" && long.TryParse(p[1], out var n) && n > 0);
        }
        catch (IOException) { return false; }
    }

    private long ReadLong(string name)
    {
        try { return long.TryParse(File.ReadAllText(Path.Combine(Dir, name)).Trim(), out var v) ? v : 0; }
        catch (IOException) { return 0; }
    }

    /// <summary>A run cgroup found on record (a dead harness's ledger), to kill and remove.</summary>
    public static MemoryCgroup Open(string dir) => new(dir, File.Exists(Path.Combine(dir, "cgroup.controllers")));

    /// <summary>SIGKILL every member until none is left (members can fork while we kill).</summary>
    public void KillAll(TimeSpan patience)
    {
        // cgroup v2 (5.14+): one write kills every member, forks included. v1 has no such file: loop below.
        if (_v2 && File.Exists(Path.Combine(Dir, "cgroup.kill"))) TryWrite(Path.Combine(Dir, "cgroup.kill"), "1");
        var until = DateTime.UtcNow + patience;
        while (Members() is { Count: > 0 } members && DateTime.UtcNow < until)
        {
            foreach (var pid in members) Native.Kill(pid, Native.SIGKILL);
            Thread.Sleep(20);
        }
    }

    public void Dispose() => Remove();

    /// <summary>Kills every member and removes the folder; whether it is gone.</summary>
    public bool Remove()
    {
        KillAll(TimeSpan.FromSeconds(5));
        for (var i = 0; i < 50; i++)
        {
            try { Directory.Delete(Dir); return true; }
            catch (DirectoryNotFoundException) { return true; }
            catch (IOException) { Thread.Sleep(20); }
            catch (UnauthorizedAccessException) { return false; }
        }
        return !Directory.Exists(Dir);
    }
}
