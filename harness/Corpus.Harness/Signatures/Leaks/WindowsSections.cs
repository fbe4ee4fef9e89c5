using System.Runtime.InteropServices;

namespace Corpus.Harness.Signatures.Leaks;

/// <summary>
/// The Windows counterpart of the lost-memory finder: the page-file-backed sections a process holds by handle, read from
/// the system handle table (NtQuerySystemInformation SystemExtendedHandleInformation), each duplicated into the
/// harness and sized with NtQuerySection; and how much of the process's address space is mapped views (MEM_MAPPED).
/// Section handles are recognised by the type index of a section the harness makes for itself. Windows only.
/// </summary>
internal static unsafe partial class WindowsSections
{
    private const int SystemExtendedHandleInformation = 64, SectionBasicInformation = 0;
    private const uint STATUS_INFO_LENGTH_MISMATCH = 0xC0000004;
    private const uint PROCESS_DUP_HANDLE = 0x40, PROCESS_QUERY_INFORMATION = 0x400, DUPLICATE_SAME_ACCESS = 2, PAGE_READWRITE = 4;
    private const uint SEC_FILE = 0x800000, SEC_IMAGE = 0x1000000, MEM_MAPPED = 0x40000, MEM_COMMIT = 0x1000;

    [StructLayout(LayoutKind.Sequential)]
    private struct HandleEntry
    {
        public nint Object;
        public nuint UniqueProcessId, HandleValue;
        public uint GrantedAccess;
        public ushort CreatorBackTraceIndex, ObjectTypeIndex;
        public uint HandleAttributes, Reserved;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct SectionBasic
    {
        public nint BaseAddress;
        public uint Attributes;
        public long Size;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct MemoryBasic
    {
        public nint BaseAddress, AllocationBase;
        public uint AllocationProtect;
        public ushort PartitionId;
        public nuint RegionSize;
        public uint State, Protect, Type;
    }

    [LibraryImport("ntdll.dll")]
    private static partial uint NtQuerySystemInformation(int infoClass, void* buffer, uint length, out uint returned);

    [LibraryImport("ntdll.dll")]
    private static partial uint NtQuerySection(nint section, int infoClass, void* info, nuint length, out nuint returned);

    [LibraryImport("kernel32.dll", EntryPoint = "CreateFileMappingW", SetLastError = true)]
    private static partial nint CreateFileMapping(nint file, nint attributes, uint protect, uint sizeHigh, uint sizeLow, nint name);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool DuplicateHandle(nint sourceProcess, nint source, nint targetProcess, out nint target, uint access,
                                                [MarshalAs(UnmanagedType.Bool)] bool inherit, uint options);

    [LibraryImport("kernel32.dll")]
    private static partial nint GetCurrentProcess();

    [LibraryImport("kernel32.dll", SetLastError = true)]
    private static partial nuint VirtualQueryEx(nint process, nint address, MemoryBasic* info, nuint length);

    /// <summary>What one process holds: page-file-backed section handles and their bytes, and its mapped views.</summary>
    public sealed record Held(int Sections, long SectionBytes, long MappedBytes, string? Problem = null);

    public static Held Of(int pid)
    {
        var process = Containment.WindowsNative.OpenProcess(PROCESS_DUP_HANDLE | PROCESS_QUERY_INFORMATION, false, pid);
        if (process == 0) return new Held(0, 0, 0, $"OpenProcess({pid}) failed: error {Marshal.GetLastPInvokeError()}");
        var probe = CreateFileMapping(-1, 0, PAGE_READWRITE, 0, 4096, 0);
        try
        {
            var entries = Handles();
            if (entries is null) return new Held(0, 0, Mapped(process), "the system handle table cannot be read here");
            var self = (nuint)Environment.ProcessId;
            var sectionType = entries.FirstOrDefault(e => e.UniqueProcessId == self && e.HandleValue == (nuint)probe).ObjectTypeIndex;
            if (sectionType == 0) return new Held(0, 0, Mapped(process), "the handle table does not list the harness's own section");
            int count = 0;
            long bytes = 0;
            foreach (var e in entries.Where(e => e.UniqueProcessId == (nuint)pid && e.ObjectTypeIndex == sectionType))
            {
                if (!DuplicateHandle(process, (nint)e.HandleValue, GetCurrentProcess(), out var dup, 0, false, DUPLICATE_SAME_ACCESS)) continue;
                try
                {
                    SectionBasic info;
                    if (NtQuerySection(dup, SectionBasicInformation, &info, (nuint)sizeof(SectionBasic), out _) != 0) continue;
                    if ((info.Attributes & (SEC_FILE | SEC_IMAGE)) != 0) continue;   // backed by a file, not the page file
                    count++;
                    bytes += info.Size;
                }
                finally { Containment.WindowsNative.CloseHandle(dup); }
            }
            return new Held(count, bytes, Mapped(process));
        }
        finally
        {
            if (probe != 0) Containment.WindowsNative.CloseHandle(probe);
            Containment.WindowsNative.CloseHandle(process);
        }
    }

    private static List<HandleEntry>? Handles()
    {
        for (uint size = 1 << 20; size <= 1 << 28; size *= 4)
        {
            var buffer = NativeMemory.Alloc(size);
            try
            {
                var status = NtQuerySystemInformation(SystemExtendedHandleInformation, buffer, size, out _);
                if (status == STATUS_INFO_LENGTH_MISMATCH) continue;
                if (status != 0) return null;
                var n = (long)*(nuint*)buffer;
                var first = (HandleEntry*)((byte*)buffer + 2 * sizeof(nuint));
                var list = new List<HandleEntry>((int)n);
                for (long i = 0; i < n; i++) list.Add(first[i]);
                return list;
            }
            finally { NativeMemory.Free(buffer); }
        }
        return null;
    }

    /// <summary>Committed bytes of mapped views (MEM_MAPPED) in the process's address space.</summary>
    private static long Mapped(nint process)
    {
        long mapped = 0;
        nint address = 0;
        MemoryBasic m;
        while (VirtualQueryEx(process, address, &m, (nuint)sizeof(MemoryBasic)) != 0)
        {
            if (m.Type == MEM_MAPPED && m.State == MEM_COMMIT) mapped += (long)m.RegionSize;
            var next = m.BaseAddress + (nint)m.RegionSize;
            if (next <= address) break;
            address = next;
        }
        return mapped;
    }
}
