using System.Runtime.InteropServices;

namespace Corpus.Harness.Containment;

internal static partial class Native
{
    public const int SIGKILL = 9, SIGQUIT = 3, SIGABRT = 6, SIGSEGV = 11, SIGTERM = 15;

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int KillRaw(int pid, int sig);

    /// <summary>kill(2); a negative pid signals the whole process group.</summary>
    public static bool Kill(int pid, int signal) => KillRaw(pid, signal) == 0;

    public static string SignalName(int sig) => sig switch
    {
        SIGABRT => "SIGABRT", SIGSEGV => "SIGSEGV", SIGKILL => "SIGKILL", SIGTERM => "SIGTERM",
        SIGQUIT => "SIGQUIT", 7 => "SIGBUS", 8 => "SIGFPE", 4 => "SIGILL",
        _ => $"SIG{sig}",
    };
}
