namespace Corpus.LostMemory;

/// <summary>What to scan.</summary>
public sealed record ScanOptions
{
    /// <summary>Only this process; null scans every process.</summary>
    public int? Pid { get; init; }

    /// <summary>
    /// Leave out processes whose objects have fewer than this many KiB allocated. Allocated, not size: every .NET
    /// process holds a "doublemapper" memfd whose size is all of RAM (or 2 TiB on .NET 8) but which has few pages.
    /// </summary>
    public long MinKb { get; init; }

    /// <summary>Include the scanning process itself in a whole-host scan.</summary>
    public bool IncludeSelf { get; init; }

    /// <summary>Where procfs is mounted (tests may point elsewhere).</summary>
    public string ProcRoot { get; init; } = "/proc";

    /// <summary>The POSIX shared memory directory.</summary>
    public string ShmDir { get; init; } = "/dev/shm";
}

/// <summary>The kind of shmem-backed object.</summary>
public enum ObjectKind
{
    /// <summary>memfd_create: "/memfd:NAME (deleted)". Always deleted, it never had a path.</summary>
    Memfd,

    /// <summary>shm_open: a file in /dev/shm, possibly unlinked ("(deleted)").</summary>
    Shm,

    /// <summary>System V shared memory attached with shmat: "/SYSV0000abcd (deleted)" in maps.</summary>
    SysV,

    /// <summary>mmap(MAP_SHARED | MAP_ANONYMOUS): "/dev/zero (deleted)" in maps.</summary>
    AnonShared,

    /// <summary>
    /// A Wine section (CreateFileMapping on the page file, and Wine's own shared pages): a deleted "tmpmap-XXXXXXXX"
    /// file in a wineserver directory "server-DEV-INODE", under $TMPDIR/wine-XXXXXX/ (Debian) or /tmp/.wine-UID/
    /// (upstream). Held by the program and by wineserver. Shmem only when that directory is on a tmpfs.
    /// </summary>
    WineSection,
}

/// <summary>One process holding an object: through descriptors, a mapping, or both.</summary>
public sealed record Holder
{
    public required int Pid { get; init; }

    /// <summary>/proc/PID/comm: "wineserver64", or for a Wine program its .exe name cut to 15 characters.</summary>
    public required string Command { get; init; }

    public int FdCount { get; init; }

    public long MappedBytes { get; init; }
}

/// <summary>One shared memory object as one process sees it.</summary>
public sealed record SharedObject
{
    public required ObjectKind Kind { get; init; }

    /// <summary>The name without prefix and "(deleted)": memfd name, /dev/shm file name, SysV key.</summary>
    public required string Name { get; init; }

    /// <summary>The descriptor or mapping target exactly as the kernel shows it.</summary>
    public required string Target { get; init; }

    public required bool Deleted { get; init; }

    /// <summary>"major:minor" of the device (tmpfs instance) holding the object.</summary>
    public required string Device { get; init; }

    public required ulong Inode { get; init; }

    /// <summary>Logical size (st_size, what ftruncate set); for a mapping that could not be stat-ed, the mapped length.</summary>
    public long SizeBytes { get; init; }

    /// <summary>Pages allocated to the object (st_blocks × 512): what it costs in Shmem. -1 if unknown.</summary>
    public long AllocatedBytes { get; init; }

    /// <summary>This process's descriptors that refer to the object.</summary>
    public IReadOnlyList<int> Fds { get; init; } = [];

    /// <summary>Bytes of the object mapped into this process (sum of its VMAs); 0 when held only by a descriptor.</summary>
    public long MappedBytes { get; init; }

    public bool Mapped => MappedBytes > 0;

    /// <summary>Held by a descriptor and not mapped: the signature of the leak.</summary>
    public bool FdOnly => !Mapped && Fds.Count > 0;

    /// <summary>Other scanned processes that hold the same object.</summary>
    public IReadOnlyList<int> SharedWith { get; init; } = [];

    /// <summary>Every scanned process that holds the object, this one included, lowest pid first.</summary>
    public IReadOnlyList<Holder> HeldBy { get; init; } = [];

    /// <summary>
    /// Its pages count in Shmem (/proc/meminfo), that is it lives on a tmpfs or shmem: always so for memfd, /dev/shm,
    /// SysV and shared anonymous memory; for a Wine section only when the wineserver directory is on a tmpfs
    /// (otherwise it is page cache of a disk file). Only Shmem objects enter the system totals.
    /// </summary>
    public bool Shmem { get; init; } = true;
}

/// <summary>The objects one process holds.</summary>
public sealed record ProcessEntry
{
    public required int Pid { get; init; }

    /// <summary>/proc/PID/comm.</summary>
    public required string Command { get; init; }

    /// <summary>/proc/PID/cmdline with NULs as spaces (may be empty for kernel threads).</summary>
    public required string CommandLine { get; init; }

    public required IReadOnlyList<SharedObject> Objects { get; init; }

    public int Count => Objects.Count;

    public long SizeBytes => Objects.Sum(o => o.SizeBytes);

    public long AllocatedBytes => Objects.Sum(o => Math.Max(0, o.AllocatedBytes));

    /// <summary>Size of the objects that appear in this process's maps.</summary>
    public long MappedSizeBytes => Objects.Where(o => o.Mapped).Sum(o => o.SizeBytes);

    /// <summary>Size of the objects this process holds only through a descriptor.</summary>
    public long FdOnlySizeBytes => Objects.Where(o => o.FdOnly).Sum(o => o.SizeBytes);

    public long FdOnlyAllocatedBytes => Objects.Where(o => o.FdOnly).Sum(o => Math.Max(0, o.AllocatedBytes));

    public int FdOnlyCount => Objects.Count(o => o.FdOnly);

    public int DeletedCount => Objects.Count(o => o.Deleted);
}

/// <summary>System-wide numbers: where Shmem goes.</summary>
public sealed record SystemTotals
{
    /// <summary>Shmem from /proc/meminfo.</summary>
    public long ShmemKb { get; init; }

    public long MemTotalKb { get; init; }

    /// <summary>Distinct objects (by device + inode) over all scanned processes.</summary>
    public int DistinctObjects { get; init; }

    /// <summary>Allocated bytes of those distinct objects, each counted once.</summary>
    public long ProcessObjectsAllocatedBytes { get; init; }

    /// <summary>The part of that held only by descriptors, in no process's address space.</summary>
    public long FdOnlyAllocatedBytes { get; init; }

    /// <summary>Files in /dev/shm that no scanned process holds: they live on with no owner at all.</summary>
    public int UnheldShmFiles { get; init; }

    public long UnheldShmFilesAllocatedBytes { get; init; }

    /// <summary>System V segments nobody has attached (nattch 0), from /proc/sysvipc/shm.</summary>
    public int UnattachedSysVSegments { get; init; }

    public long UnattachedSysVResidentBytes { get; init; }

    /// <summary>Shmem minus everything above: other tmpfs files, GPU buffers, objects of processes not scanned.</summary>
    public long UnaccountedKb { get; init; }

    /// <summary>True when only part of the host was scanned (--pid, --min-kb): the unaccounted figure is then partial.</summary>
    public bool Partial { get; init; }
}

/// <summary>The result of one scan.</summary>
public sealed record Report
{
    public required DateTimeOffset Time { get; init; }

    public required IReadOnlyList<ProcessEntry> Processes { get; init; }

    public required SystemTotals System { get; init; }

    public int ProcessesScanned { get; init; }

    /// <summary>Processes that exited while being scanned.</summary>
    public int ProcessesVanished { get; init; }

    /// <summary>Processes whose fd or maps could not be read.</summary>
    public int ProcessesDenied { get; init; }

    public double ElapsedMs { get; init; }
}
