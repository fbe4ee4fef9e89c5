using System.Runtime.InteropServices;

namespace Corpus.LostMemory;

/// <summary>statx(2): the one stat whose buffer layout is the same on every Linux architecture; statfs(2) for the file system type.</summary>
internal static partial class Native
{
    private const long TmpfsMagic = 0x01021994;

    private const int AtFdCwd = -100;
    private const uint StatxBasicStats = 0x7ff;
    private const int StatxBufferSize = 256;

    internal readonly record struct FileStat(uint DevMajor, uint DevMinor, ulong Inode, long Size, long Blocks);

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int StatX(int dirfd, string path, int flags, uint mask, byte* buffer);

    /// <summary>Follows the link, so /proc/PID/fd/N and /proc/PID/map_files/A-B give the object, deleted or not.</summary>
    internal static unsafe bool TryStat(string path, out FileStat stat)
    {
        byte* b = stackalloc byte[StatxBufferSize];
        if (StatX(AtFdCwd, path, 0, StatxBasicStats, b) != 0)
        {
            stat = default;
            return false;
        }
        // struct statx: stx_ino @32, stx_size @40, stx_blocks @48, stx_dev_major @136, stx_dev_minor @140.
        stat = new FileStat(
            DevMajor: *(uint*)(b + 136),
            DevMinor: *(uint*)(b + 140),
            Inode: *(ulong*)(b + 32),
            Size: *(long*)(b + 40),
            Blocks: *(long*)(b + 48));
        return true;
    }

    [LibraryImport("libc", EntryPoint = "statfs", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int StatFs(string path, byte* buffer);

    /// <summary>Whether the file (a /proc/PID/fd/N link is followed) is on a tmpfs. False when it cannot be told.</summary>
    internal static unsafe bool IsOnTmpfs(string path)
    {
        byte* b = stackalloc byte[256]; // struct statfs is 120 bytes on 64-bit Linux
        if (StatFs(path, b) != 0)
            return false;
        // f_type is the first field, a native long on the 64-bit targets we run on.
        return (nint.Size == 8 ? *(long*)b : *(int*)b) == TmpfsMagic;
    }
}
