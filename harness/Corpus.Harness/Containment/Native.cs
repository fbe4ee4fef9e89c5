using System.Runtime.InteropServices;

namespace Corpus.Harness.Containment;

internal static partial class Native
{
    public const int SIGINT = 2, SIGKILL = 9, SIGQUIT = 3, SIGABRT = 6, SIGSEGV = 11, SIGTERM = 15;

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int KillRaw(int pid, int sig);

    [LibraryImport("libc", EntryPoint = "mkdir", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int MkdirRaw(string path, uint mode);

    /// <summary>mkdir(2): false when the folder already exists, so two harnesses cannot both claim it.</summary>
    public static bool MakeDir(string path)
    {
        if (MkdirRaw(path, 0x1ed /* 0755 */) == 0) return true;
        var errno = Marshal.GetLastPInvokeError();
        if (errno == 17 /* EEXIST */) return false;
        throw new IOException($"cannot create {path}: {Marshal.GetPInvokeErrorMessage(errno)}");
    }

    /// <summary>kill(2); a negative pid signals the whole process group.</summary>
    public static bool Kill(int pid, int signal) => KillRaw(pid, signal) == 0;

    public static string SignalName(int sig) => sig switch
    {
        SIGABRT => "SIGABRT", SIGSEGV => "SIGSEGV", SIGKILL => "SIGKILL", SIGTERM => "SIGTERM",
        SIGQUIT => "SIGQUIT", SIGINT => "SIGINT", 7 => "SIGBUS", 8 => "SIGFPE", 4 => "SIGILL",
        _ => $"SIG{sig}",
    };
}
