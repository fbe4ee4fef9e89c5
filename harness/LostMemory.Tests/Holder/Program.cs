// Test helper for the lost-memory finder: holds four shmem objects of known sizes and waits for stdin to close.
//   lm-fdonly      memfd, 3 MiB, filled, unmapped, fd kept and dup'ed (two fds, one object)   -> fd only
//   lm-mapped      memfd, 2 MiB, 1 MiB filled, fd closed, mapping kept                        -> mapped only
//   lm-shm-fdonly  shm,   5 MiB, unlinked, filled, unmapped, fd kept                          -> fd only
//   lm-shm-both    shm,   1 MiB, unlinked, filled, fd and mapping kept                         -> fd + mapped
// Prints "READY" once everything is in place.
// "Holder hold PATH COMM" instead opens PATH read-write, keeps the descriptor, and names itself COMM (as
// /proc/PID/comm shows it): two of them play a Wine program and its wineserver holding one section file.
using System.Runtime.InteropServices;

namespace Corpus.LostMemory.Holder;

internal static unsafe partial class Program
{
    private const int ProtRead = 1, ProtWrite = 2, MapShared = 1;
    private const int ORdwr = 2, OCreat = 0x40, OExcl = 0x80;
    private const uint MfdCloexec = 1;
    private const int MiB = 1 << 20;

    [LibraryImport("libc", EntryPoint = "memfd_create", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int MemfdCreate(string name, uint flags);

    [LibraryImport("libc", EntryPoint = "shm_open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int ShmOpen(string name, int oflag, uint mode);

    [LibraryImport("libc", EntryPoint = "shm_unlink", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int ShmUnlink(string name);

    [LibraryImport("libc", EntryPoint = "ftruncate", SetLastError = true)]
    private static partial int Ftruncate(int fd, long length);

    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    private static partial nint Mmap(nint addr, nuint length, int prot, int flags, int fd, long offset);

    [LibraryImport("libc", EntryPoint = "munmap", SetLastError = true)]
    private static partial int Munmap(nint addr, nuint length);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);

    [LibraryImport("libc", EntryPoint = "dup", SetLastError = true)]
    private static partial int Dup(int fd);

    [LibraryImport("libc", EntryPoint = "prctl", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Prctl(int option, string name, nint a3, nint a4, nint a5);

    private const int PrSetName = 15;

    private static int Check(int r, string what) =>
        r >= 0 ? r : throw new InvalidOperationException($"{what} failed: errno {Marshal.GetLastPInvokeError()}");

    private static nint Map(int fd, long size, long fill)
    {
        Check(Ftruncate(fd, size), "ftruncate");
        nint p = Mmap(0, (nuint)size, ProtRead | ProtWrite, MapShared, fd, 0);
        if (p == -1)
            throw new InvalidOperationException($"mmap failed: errno {Marshal.GetLastPInvokeError()}");
        ulong x = 0x9E3779B97F4A7C15UL;
        var q = (ulong*)p;
        for (long i = 0; i < fill / 8; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            q[i] = x;
        }
        return p;
    }

    private static int Shm(string name)
    {
        int fd = Check(ShmOpen(name, ORdwr | OCreat | OExcl, 0x180), "shm_open " + name);
        Check(ShmUnlink(name), "shm_unlink " + name);
        return fd;
    }

    public static int Main(string[] args)
    {
        if (args is ["hold", var path, var comm])
            return Hold(path, comm);
        int pid = Environment.ProcessId;

        int a = Check(MemfdCreate("lm-fdonly", MfdCloexec), "memfd_create");
        Check(Munmap(Map(a, 3 * MiB, 3 * MiB), 3 * MiB), "munmap");
        int a2 = Check(Dup(a), "dup");

        int b = Check(MemfdCreate("lm-mapped", MfdCloexec), "memfd_create");
        nint bMap = Map(b, 2 * MiB, 1 * MiB);
        Check(Close(b), "close");

        int c = Shm($"/lm-shm-fdonly-{pid}");
        Check(Munmap(Map(c, 5 * MiB, 5 * MiB), 5 * MiB), "munmap");

        int d = Shm($"/lm-shm-both-{pid}");
        nint dMap = Map(d, 1 * MiB, 1 * MiB);

        Console.Out.WriteLine($"READY fds={a},{a2},{c},{d}");
        Console.Out.Flush();
        Console.In.ReadToEnd(); // until the test closes our stdin (or dies)
        GC.KeepAlive(bMap);
        GC.KeepAlive(dMap);
        return 0;
    }

    private static int Hold(string path, string comm)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        Check(Prctl(PrSetName, comm, 0, 0, 0), "prctl"); // Main runs on the main thread, whose name is comm
        Console.Out.WriteLine($"READY fd={file.SafeFileHandle.DangerousGetHandle()}");
        Console.Out.Flush();
        Console.In.ReadToEnd();
        return 0;
    }
}
