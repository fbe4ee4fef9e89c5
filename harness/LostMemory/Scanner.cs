using System.Diagnostics;
using System.Globalization;

namespace Corpus.LostMemory;

/// <summary>
/// Finds shmem-backed objects (memfd, POSIX shm, SysV, shared anonymous, Wine sections) per process through /proc/PID/fd and
/// /proc/PID/maps, and sets them against Shmem in /proc/meminfo. Objects are identified by device + inode, so one
/// object held through several descriptors, mappings or processes is counted once in the system totals.
/// </summary>
public static class Scanner
{
    internal readonly record struct Key(uint Major, uint Minor, ulong Inode);

    private sealed class Builder
    {
        public required ObjectKind Kind;
        public required string Name;
        public required string Target;
        public required bool Deleted;
        public long Size = -1;
        public long Allocated = -1;
        public readonly List<int> Fds = [];
        public long Mapped;
        public bool? Shmem;
    }

    public static Report Scan(ScanOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var clock = Stopwatch.StartNew();
        int self = Environment.ProcessId;
        var chosen = new SortedSet<int>(options.Pids ?? []);
        if (options.Pid is int one)
            chosen.Add(one);
        var pids = chosen.Count > 0 ? chosen.ToList() : EnumeratePids(options.ProcRoot).Where(p => p != self || options.IncludeSelf).ToList();

        var processes = new List<(ProcessEntry Entry, List<Key> Keys)>();
        int vanished = 0, denied = 0;
        foreach (int pid in pids)
        {
            switch (ScanProcess(options.ProcRoot, pid, out var entry, out var keys))
            {
                case Outcome.Ok:
                    processes.Add((entry!, keys!));
                    break;
                case Outcome.Vanished:
                    vanished++;
                    break;
                case Outcome.Denied:
                    denied++;
                    break;
            }
        }

        // Cross-process view: who holds each object, whether anyone maps it.
        var holders = new Dictionary<Key, List<int>>();
        var heldBy = new Dictionary<Key, List<Holder>>();
        var mappedAnywhere = new HashSet<Key>();
        var allocated = new Dictionary<Key, long>();
        foreach (var (entry, keys) in processes)
        {
            for (int i = 0; i < keys.Count; i++)
            {
                var o = entry.Objects[i];
                if (!holders.TryGetValue(keys[i], out var list))
                    holders[keys[i]] = list = [];
                list.Add(entry.Pid);
                if (!heldBy.TryGetValue(keys[i], out var refs))
                    heldBy[keys[i]] = refs = [];
                refs.Add(new Holder { Pid = entry.Pid, Command = entry.Command, FdCount = o.Fds.Count, MappedBytes = o.MappedBytes });
                if (o.Mapped)
                    mappedAnywhere.Add(keys[i]);
                // The totals are about Shmem: a Wine section on a disk file system is page cache, not Shmem.
                if (o.Shmem)
                    allocated[keys[i]] = Math.Max(allocated.GetValueOrDefault(keys[i]), Math.Max(0, o.AllocatedBytes));
            }
        }

        var finished = new List<ProcessEntry>();
        foreach (var (entry, keys) in processes)
        {
            var objects = entry.Objects.Select((o, i) => o with
            {
                SharedWith = holders[keys[i]].Where(p => p != entry.Pid).ToList(),
                HeldBy = heldBy[keys[i]].OrderBy(h => h.Pid).ToList(),
            }).ToList();
            var done = entry with { Objects = objects };
            if (done.Count > 0 && done.AllocatedBytes >= options.MinKb * 1024)
                finished.Add(done);
        }
        finished.Sort((a, b) => b.AllocatedBytes != a.AllocatedBytes ? b.AllocatedBytes.CompareTo(a.AllocatedBytes) : a.Pid.CompareTo(b.Pid));

        var meminfo = ProcText.ReadMeminfo(Path.Combine(options.ProcRoot, "meminfo"));
        long objectsAllocated = allocated.Values.Sum();
        long fdOnlyAllocated = allocated.Where(kv => !mappedAnywhere.Contains(kv.Key)).Sum(kv => kv.Value);
        var (unheldFiles, unheldBytes) = UnheldShmFiles(options.ShmDir, holders.Keys.ToHashSet());
        var (sysvCount, sysvBytes) = ProcText.UnattachedSysV(Path.Combine(options.ProcRoot, "sysvipc", "shm"));
        long shmemKb = meminfo.GetValueOrDefault("Shmem", -1);
        var system = new SystemTotals
        {
            ShmemKb = shmemKb,
            MemTotalKb = meminfo.GetValueOrDefault("MemTotal", -1),
            DistinctObjects = holders.Count,
            ProcessObjectsAllocatedBytes = objectsAllocated,
            FdOnlyAllocatedBytes = fdOnlyAllocated,
            UnheldShmFiles = unheldFiles,
            UnheldShmFilesAllocatedBytes = unheldBytes,
            UnattachedSysVSegments = sysvCount,
            UnattachedSysVResidentBytes = sysvBytes,
            UnaccountedKb = shmemKb < 0 ? -1 : shmemKb - (objectsAllocated + unheldBytes + sysvBytes) / 1024,
            Partial = chosen.Count > 0,
        };

        return new Report
        {
            Time = DateTimeOffset.Now,
            Processes = finished,
            System = system,
            ProcessesScanned = processes.Count,
            ProcessesVanished = vanished,
            ProcessesDenied = denied,
            ElapsedMs = clock.Elapsed.TotalMilliseconds,
        };
    }

    private enum Outcome { Ok, Vanished, Denied }

    private static IEnumerable<int> EnumeratePids(string procRoot)
    {
        foreach (var dir in Directory.EnumerateDirectories(procRoot))
        {
            if (int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out int pid))
                yield return pid;
        }
    }

    private static Outcome ScanProcess(string procRoot, int pid, out ProcessEntry? entry, out List<Key>? keys)
    {
        entry = null;
        keys = null;
        string dir = Path.Combine(procRoot, pid.ToString(CultureInfo.InvariantCulture));
        string comm, cmdline;
        try
        {
            comm = File.ReadAllText(Path.Combine(dir, "comm")).TrimEnd('\n');
            cmdline = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' ').TrimEnd();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return e is UnauthorizedAccessException ? Outcome.Denied : Outcome.Vanished;
        }

        var objects = new Dictionary<Key, Builder>();
        var order = new List<Key>();
        bool anyRead = false;

        // Descriptors: the only thing that keeps an unmapped, deleted object alive.
        string fdDir = Path.Combine(dir, "fd");
        try
        {
            foreach (string fdPath in Directory.EnumerateFileSystemEntries(fdDir))
            {
                if (!int.TryParse(Path.GetFileName(fdPath), NumberStyles.None, CultureInfo.InvariantCulture, out int fd))
                    continue;
                string? target;
                try
                {
                    target = new FileInfo(fdPath).LinkTarget;
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    continue; // closed while we looked
                }
                if (target is null || !ProcText.TryClassify(target, out var kind, out var name, out bool deleted) || kind is ObjectKind.SysV or ObjectKind.AnonShared)
                    continue;
                if (!Native.TryStat(fdPath, out var st))
                    continue;
                var key = new Key(st.DevMajor, st.DevMinor, st.Inode);
                var b = Get(objects, order, key, kind, name, target, deleted);
                b.Size = st.Size;
                b.Allocated = st.Blocks * 512;
                b.Fds.Add(fd);
                b.Shmem ??= kind != ObjectKind.WineSection || Native.IsOnTmpfs(fdPath);
            }
            anyRead = true;
        }
        catch (DirectoryNotFoundException)
        {
            return Outcome.Vanished;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // fd of a process we may not read (or a zombie): maps may still work.
        }

        // Mappings: objects in the address space, with or without a descriptor.
        try
        {
            foreach (string line in File.ReadLines(Path.Combine(dir, "maps")))
            {
                if (!ProcText.TryParseMapsLine(line, out var m) || !ProcText.TryClassify(m.Path, out var kind, out var name, out bool deleted))
                    continue;
                var key = new Key(m.DevMajor, m.DevMinor, m.Inode);
                var b = Get(objects, order, key, kind, name, m.Path, deleted);
                b.Mapped += m.Length;
                if (b.Size < 0)
                {
                    string mapFile = Path.Combine(dir, "map_files", $"{m.Start:x}-{m.End:x}");
                    if (Native.TryStat(mapFile, out var st))
                    {
                        b.Size = st.Size;
                        b.Allocated = st.Blocks * 512;
                    }
                    b.Shmem ??= kind != ObjectKind.WineSection || Native.IsOnTmpfs(mapFile);
                }
            }
            anyRead = true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }

        if (!anyRead)
            return Directory.Exists(dir) ? Outcome.Denied : Outcome.Vanished;

        keys = order;
        entry = new ProcessEntry
        {
            Pid = pid,
            Command = comm,
            CommandLine = cmdline,
            Objects = order.Select(k => (Key: k, B: objects[k])).Select(x => new SharedObject
            {
                Kind = x.B.Kind,
                Name = x.B.Name,
                Target = x.B.Target,
                Deleted = x.B.Deleted,
                Device = string.Create(CultureInfo.InvariantCulture, $"{x.Key.Major}:{x.Key.Minor}"),
                Inode = x.Key.Inode,
                SizeBytes = x.B.Size >= 0 ? x.B.Size : x.B.Mapped,
                AllocatedBytes = x.B.Allocated,
                Fds = x.B.Fds,
                MappedBytes = x.B.Mapped,
                Shmem = x.B.Shmem ?? x.B.Kind != ObjectKind.WineSection,
            }).ToList(),
        };
        return Outcome.Ok;
    }

    private static Builder Get(Dictionary<Key, Builder> objects, List<Key> order, Key key, ObjectKind kind, string name, string target, bool deleted)
    {
        if (!objects.TryGetValue(key, out var b))
        {
            objects[key] = b = new Builder { Kind = kind, Name = name, Target = target, Deleted = deleted };
            order.Add(key);
        }
        return b;
    }

    private static (int Count, long Bytes) UnheldShmFiles(string shmDir, HashSet<Key> held)
    {
        int count = 0;
        long bytes = 0;
        try
        {
            foreach (string file in Directory.EnumerateFiles(shmDir, "*", new EnumerationOptions { RecurseSubdirectories = true, IgnoreInaccessible = true, AttributesToSkip = 0 }))
            {
                if (Native.TryStat(file, out var st) && !held.Contains(new Key(st.DevMajor, st.DevMinor, st.Inode)))
                {
                    count++;
                    bytes += st.Blocks * 512;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }
        return (count, bytes);
    }
}
