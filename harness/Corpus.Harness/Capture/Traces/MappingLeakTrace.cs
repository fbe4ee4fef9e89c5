namespace Corpus.Harness.Capture.Traces;

/// <summary>One shared, descriptor-backed view that the program unmapped: its object was still open at the cut, or closed.</summary>
public sealed record UnmappedView(int Pid, int Fd, long Bytes, double MappedAt, double UnmappedAt, double? ClosedAt,
                                  string Created, IReadOnlyList<string> UnmapFrames);

/// <param name="Cut">The time the views were judged at (the leak's marker), or null: the end of the trace.</param>
public sealed record MappingLeakFacts(IReadOnlyList<UnmappedView> Views, double? Cut)
{
    public IReadOnlyList<UnmappedView> NotClosed => [.. Views.Where(v => v.ClosedAt is null)];
    public long NotClosedBytes => NotClosed.Sum(v => v.Bytes);
}

/// <summary>
/// The file-mapping leak in a syscall trace: a shared mapping of a descriptor (mmap MAP_SHARED on a memfd or shm object)
/// that is munmap'ed while its descriptor is never closed, up to the cut. That is the program's whole bug: the view
/// goes (RSS drops), the object stays (the pages stay in Shmem). The fix closes each descriptor right after its munmap.
/// Pairs each syscall's enter with its exit on the same thread (mmap's address and memfd_create's descriptor are
/// return values), follows a descriptor number's reuse after a close, and ignores private and anonymous mappings.
/// </summary>
public static class MappingLeakTrace
{
    private const long MapShared = 0x01;

    public static MappingLeakFacts Find(NativeTraceData trace, double? cut = null)
    {
        var pending = new Dictionary<(int Pid, int Tid), NativeEvent>();
        // Per process: open descriptors (how they were made), live shared views by address, and the views unmapped.
        var made = new Dictionary<(int Pid, long Fd), string>();
        var views = new Dictionary<(int Pid, long Addr), (long Fd, long Len, double At, string Created)>();
        var unmapped = new List<(int Pid, long Fd, long Len, double MappedAt, NativeEvent Unmap, string Created)>();
        var closes = new List<(int Pid, long Fd, double At)>();
        foreach (var e in trace.Events.OrderBy(e => e.Seconds))
        {
            var key = (e.Pid, e.Tid);
            if (e.Name.StartsWith("sys_enter_", StringComparison.Ordinal))
            {
                pending[key] = e;
                switch (e.Name)
                {
                    case "sys_enter_munmap" when Get(e, "addr") is { } addr && views.Remove((e.Pid, addr), out var v):
                        unmapped.Add((e.Pid, v.Fd, v.Len, v.At, e, v.Created));
                        break;
                    case "sys_enter_close" when Get(e, "fd") is { } fd:
                        closes.Add((e.Pid, fd, e.Seconds));
                        made.Remove((e.Pid, fd));
                        break;
                }
                continue;
            }
            if (!e.Name.StartsWith("sys_exit_", StringComparison.Ordinal) || !pending.Remove(key, out var enter)) continue;
            var ret = Get(e, "ret");
            if (ret is null || ret < 0 && ret > -4096) continue;   // the call failed (-errno)
            switch (e.Name)
            {
                case "sys_exit_memfd_create":
                    made[(e.Pid, ret.Value)] = "memfd_create";
                    break;
                case "sys_exit_openat":
                    made[(e.Pid, ret.Value)] = "openat";
                    break;
                case "sys_exit_mmap" when enter.Name == "sys_enter_mmap" && Get(enter, "fd") is { } fd and >= 0 and < int.MaxValue
                                          && ((Get(enter, "flags") ?? 0) & MapShared) != 0:
                    views[(e.Pid, ret.Value)] = (fd, Get(enter, "len") ?? 0, e.Seconds, made.GetValueOrDefault((e.Pid, fd), "inherited"));
                    break;
            }
        }
        var result = new List<UnmappedView>();
        foreach (var u in unmapped)
        {
            // The first close of that descriptor after the munmap and before the cut; a later one does not count.
            var closed = closes.FirstOrDefault(c => c.Pid == u.Pid && c.Fd == u.Fd && c.At >= u.Unmap.Seconds && (cut is null || c.At <= cut));
            result.Add(new UnmappedView(u.Pid, (int)u.Fd, u.Len, Math.Round(u.MappedAt, 6), Math.Round(u.Unmap.Seconds, 6),
                                        closed.Pid == 0 ? null : Math.Round(closed.At, 6), u.Created, u.Unmap.Frames));
        }
        return new MappingLeakFacts(result, cut);
    }

    private static long? Get(NativeEvent e, string field)
    {
        if (!e.Fields.TryGetValue(field, out var v)) return null;
        try
        {
            var n = PerfTrace.Number(v);
            // perf prints an int argument (fd) as 32 bits: 0xffffffff is -1.
            return field == "fd" && n == 0xffffffffL ? -1 : n;
        }
        catch (FormatException) { return null; }
    }
}
