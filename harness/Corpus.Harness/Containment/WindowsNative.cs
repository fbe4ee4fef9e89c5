using System.Runtime.InteropServices;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace Corpus.Harness.Containment;

/// <summary>
/// Win32 calls the Windows containment needs: job objects, suspended process creation, pipes, counters. Callers reach
/// them only behind OperatingSystem.IsWindows() (not [SupportedOSPlatform]: the analyzer cannot follow a null check).
/// </summary>
internal static unsafe partial class WindowsNative
{
    public const uint CREATE_SUSPENDED = 0x4, CREATE_NEW_PROCESS_GROUP = 0x200, CREATE_UNICODE_ENVIRONMENT = 0x400,
                      CREATE_NO_WINDOW = 0x08000000;
    public const uint JOB_OBJECT_LIMIT_PROCESS_MEMORY = 0x100, JOB_OBJECT_LIMIT_JOB_MEMORY = 0x200,
                      JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x400, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
    public const int JobObjectBasicAccountingInformation = 1, JobObjectBasicProcessIdList = 3,
                     JobObjectAssociateCompletionPortInformation = 7, JobObjectExtendedLimitInformation = 9;
    public const uint JOB_OBJECT_MSG_PROCESS_MEMORY_LIMIT = 9, JOB_OBJECT_MSG_JOB_MEMORY_LIMIT = 10;
    public const int STARTF_USESTDHANDLES = 0x100, HANDLE_FLAG_INHERIT = 1;
    public const uint PROCESS_QUERY_LIMITED_INFORMATION = 0x1000, PROCESS_TERMINATE = 0x1, SYNCHRONIZE = 0x100000;
    public const uint STILL_ACTIVE = 259, WAIT_OBJECT_0 = 0;

    [StructLayout(LayoutKind.Sequential)]
    public struct JOBOBJECT_BASIC_LIMIT_INFORMATION
    {
        public long PerProcessUserTimeLimit, PerJobUserTimeLimit;
        public uint LimitFlags;
        public nuint MinimumWorkingSetSize, MaximumWorkingSetSize;
        public uint ActiveProcessLimit;
        public nuint Affinity;
        public uint PriorityClass, SchedulingClass;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct IO_COUNTERS
    {
        public ulong ReadOperationCount, WriteOperationCount, OtherOperationCount, ReadTransferCount, WriteTransferCount, OtherTransferCount;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct JOBOBJECT_EXTENDED_LIMIT_INFORMATION
    {
        public JOBOBJECT_BASIC_LIMIT_INFORMATION BasicLimitInformation;
        public IO_COUNTERS IoInfo;
        public nuint ProcessMemoryLimit, JobMemoryLimit, PeakProcessMemoryUsed, PeakJobMemoryUsed;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct JOBOBJECT_BASIC_ACCOUNTING_INFORMATION
    {
        public long TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime;
        public uint TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct JOBOBJECT_ASSOCIATE_COMPLETION_PORT
    {
        public nint CompletionKey, CompletionPort;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct STARTUPINFOW
    {
        public int cb;
        public nint lpReserved, lpDesktop, lpTitle;
        public int dwX, dwY, dwXSize, dwYSize, dwXCountChars, dwYCountChars, dwFillAttribute, dwFlags;
        public short wShowWindow, cbReserved2;
        public nint lpReserved2, hStdInput, hStdOutput, hStdError;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct STARTUPINFOEXW
    {
        public STARTUPINFOW StartupInfo;
        public nint lpAttributeList;
    }

    public const uint EXTENDED_STARTUPINFO_PRESENT = 0x80000;
    public const nuint PROC_THREAD_ATTRIBUTE_HANDLE_LIST = 0x20002;

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool InitializeProcThreadAttributeList(nint list, int count, int flags, ref nuint size);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool UpdateProcThreadAttribute(nint list, uint flags, nuint attribute, void* value, nuint size, nint previous, nint returnSize);

    [LibraryImport("kernel32.dll")]
    public static partial void DeleteProcThreadAttributeList(nint list);

    [StructLayout(LayoutKind.Sequential)]
    public struct PROCESS_INFORMATION
    {
        public nint hProcess, hThread;
        public int dwProcessId, dwThreadId;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PROCESS_MEMORY_COUNTERS_EX
    {
        public uint cb, PageFaultCount;
        public nuint PeakWorkingSetSize, WorkingSetSize, QuotaPeakPagedPoolUsage, QuotaPagedPoolUsage,
                     QuotaPeakNonPagedPoolUsage, QuotaNonPagedPoolUsage, PagefileUsage, PeakPagefileUsage, PrivateUsage;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PERFORMANCE_INFORMATION
    {
        public uint cb;
        public nuint CommitTotal, CommitLimit, CommitPeak, PhysicalTotal, PhysicalAvailable, SystemCache, KernelTotal,
                     KernelPaged, KernelNonpaged, PageSize;
        public uint HandleCount, ProcessCount, ThreadCount;
    }

    [LibraryImport("kernel32.dll", EntryPoint = "CreateJobObjectW", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    public static partial SafeFileHandle CreateJobObject(nint attributes, string? name);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool SetInformationJobObject(SafeFileHandle job, int infoClass, void* info, uint length);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool QueryInformationJobObject(SafeFileHandle job, int infoClass, void* info, uint length, out uint returned);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool AssignProcessToJobObject(SafeFileHandle job, nint process);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool TerminateJobObject(SafeFileHandle job, uint exitCode);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    public static partial nint CreateIoCompletionPort(nint fileHandle, nint existingPort, nuint key, uint threads);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetQueuedCompletionStatus(nint port, out uint bytes, out nuint key, out nint overlapped, uint milliseconds);

    [LibraryImport("kernel32.dll", EntryPoint = "CreateProcessW", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool CreateProcess(string? application, char* commandLine, nint processAttributes, nint threadAttributes,
                                             [MarshalAs(UnmanagedType.Bool)] bool inheritHandles, uint flags, char* environment,
                                             string? currentDirectory, void* startupInfo, PROCESS_INFORMATION* info);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    public static partial uint ResumeThread(nint thread);

    [LibraryImport("kernel32.dll", EntryPoint = "TerminateProcess", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool TerminateProcessHandle(nint process, uint exitCode);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool CloseHandle(nint handle);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool CreatePipe(out SafeFileHandle read, out SafeFileHandle write, nint attributes, uint size);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool SetHandleInformation(SafeFileHandle handle, int mask, int flags);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetExitCodeProcess(nint process, out uint code);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    public static partial uint WaitForSingleObject(nint handle, uint milliseconds);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    public static partial nint OpenProcess(uint access, [MarshalAs(UnmanagedType.Bool)] bool inherit, int pid);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetProcessHandleCount(nint process, out uint count);

    [LibraryImport("kernel32.dll", EntryPoint = "K32GetProcessMemoryInfo", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetProcessMemoryInfo(nint process, PROCESS_MEMORY_COUNTERS_EX* counters, uint size);

    [LibraryImport("kernel32.dll", EntryPoint = "K32GetPerformanceInfo", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool GetPerformanceInfo(PERFORMANCE_INFORMATION* info, uint size);

    [LibraryImport("kernel32.dll", EntryPoint = "CreateDirectoryW", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool CreateDirectory(string path, nint attributes);

    [LibraryImport("ntdll.dll", EntryPoint = "wine_get_version")]
    private static partial nint WineGetVersion();

    /// <summary>Wine's version when the harness runs under Wine (ntdll exports wine_get_version), else null.</summary>
    public static string? WineVersion()
    {
        try { return Marshal.PtrToStringAnsi(WineGetVersion()); }
        catch (EntryPointNotFoundException) { return null; }
    }

    public static Win32Failure Fail(string what) => new(what, Marshal.GetLastPInvokeError());

    /// <summary>The process's own commit (PrivateUsage), working set and handle count; nulls when it cannot be read.</summary>
    public static (long Private, long WorkingSet, long Pagefile, int Handles)? Counters(int pid)
    {
        var h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid);
        if (h == 0) return null;
        try
        {
            var c = new PROCESS_MEMORY_COUNTERS_EX { cb = (uint)sizeof(PROCESS_MEMORY_COUNTERS_EX) };
            if (!GetProcessMemoryInfo(h, &c, c.cb)) return null;
            var handles = GetProcessHandleCount(h, out var n) ? (int)n : -1;
            return ((long)c.PrivateUsage, (long)c.WorkingSetSize, (long)c.PagefileUsage, handles);
        }
        finally { CloseHandle(h); }
    }

    /// <summary>System commit charge in bytes (GetPerformanceInfo), -1 when it cannot be read.</summary>
    public static long CommitTotalBytes()
    {
        var p = new PERFORMANCE_INFORMATION { cb = (uint)sizeof(PERFORMANCE_INFORMATION) };
        return GetPerformanceInfo(&p, p.cb) ? (long)p.CommitTotal * (long)p.PageSize : -1;
    }

    /// <summary>A UTF-16 environment block: sorted KEY=VALUE strings, each NUL-terminated, and a final NUL.</summary>
    public static string EnvironmentBlock(IReadOnlyDictionary<string, string>? extra)
    {
        var env = new SortedDictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (System.Collections.DictionaryEntry e in Environment.GetEnvironmentVariables())
            env[(string)e.Key] = (string?)e.Value ?? "";
        foreach (var kv in extra ?? new Dictionary<string, string>()) env[kv.Key] = kv.Value;
        var sb = new StringBuilder();
        foreach (var kv in env) sb.Append(kv.Key).Append('=').Append(kv.Value).Append('\0');
        return sb.Append('\0').ToString();
    }
}

public sealed class Win32Failure(string what, int error)
    : IOException($"{what} failed: {new System.ComponentModel.Win32Exception(error).Message} (error {error})")
{
    public int Error => error;
}

/// <summary>
/// A Windows exit code in the words manifests use: the NTSTATUS of a crash becomes the signal a Linux run of the
/// same fault gets (an access violation is SIGSEGV, a fail-fast such as abort() in the UCRT is SIGABRT), so one
/// signature reads both; any other code stays an exit code.
/// </summary>
public static class WindowsExit
{
    public static (int? Code, string? Signal) Describe(uint code) => code switch
    {
        0xC0000005 or 0xC00000FD or 0xC0000006 => (null, "SIGSEGV"),   // access violation, stack overflow, in-page error
        0xC0000409 => (null, "SIGABRT"),                                // __fastfail: abort(), /GS, terminate()
        0xC0000602 => (null, "SIGABRT"),                                // fail-fast exception: .NET's FailFast and fatal errors
        0xC000001D => (null, "SIGILL"),
        0xC0000094 or 0xC0000095 => (null, "SIGFPE"),
        _ => ((int)code, null),
    };
}

/// <summary>How a Windows command line is split by the C runtime (CommandLineToArgvW rules), done in reverse.</summary>
public static class WindowsCommandLine
{
    public static string Build(string program, IEnumerable<string> args) =>
        string.Join(' ', new[] { Quote(program) }.Concat(args.Select(Quote)));

    public static string Quote(string arg)
    {
        if (arg.Length > 0 && arg.IndexOfAny([' ', '\t', '\n', '\v', '"']) < 0) return arg;
        var sb = new StringBuilder("\"");
        for (var i = 0; i < arg.Length; i++)
        {
            var slashes = 0;
            while (i < arg.Length && arg[i] == '\\') { slashes++; i++; }
            // Backslashes are literal unless they precede a quote (or the closing quote): then they are doubled.
            if (i == arg.Length) { sb.Append('\\', slashes * 2); break; }
            if (arg[i] == '"') sb.Append('\\', slashes * 2 + 1).Append('"');
            else sb.Append('\\', slashes).Append(arg[i]);
        }
        return sb.Append('"').ToString();
    }
}
