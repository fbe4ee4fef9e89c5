using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using static Corpus.Harness.Containment.WindowsNative;

namespace Corpus.Harness.Containment;

/// <summary>
/// One run in its own Job Object, the Windows counterpart of the process group and memory cgroup: the process is
/// created suspended, put in the job, then resumed, so nothing it starts can run outside the job. The job kills every
/// member when its last handle closes (kill-on-job-close): that handle is the harness's only, not inheritable, so a
/// harness that dies in any way takes the whole tree with it; no supervisor is needed. It also caps each process's
/// and the whole job's commit, and is terminated as a whole at the end of the run.
/// </summary>
internal sealed unsafe class WindowsJob : IRunSession
{
    // Inheritable pipe ends must exist only while one CreateProcess runs, or a concurrent run inherits them and keeps
    // this run's pipes open after it ends.
    private static readonly object CreateLock = new();

    private readonly SafeFileHandle _job;
    private readonly nint _port;
    private readonly nint _process;
    private readonly Task _stdout, _stderr;
    private bool _memoryLimitHit;
    private readonly bool _cpuClock;

    public int Pid { get; }
    public long MemoryLimit { get; }
    public string Containment { get; }

    public WindowsJob(ProcessSpec spec, Action<string?, bool> onLine)
    {
        _job = CreateJobObject(0, null);
        if (_job.IsInvalid) throw Fail("CreateJobObject");
        MemoryLimit = spec.MemoryBytes;
        _cpuClock = spec.CpuTimeout is not null;
        Containment = $"job object (memory cap {spec.MemoryBytes >> 20} MB per process and per job, kill on job close), "
                      + $"job kill, timeout {spec.Timeout.TotalSeconds:0} s";
        var limits = new JOBOBJECT_EXTENDED_LIMIT_INFORMATION
        {
            BasicLimitInformation = new JOBOBJECT_BASIC_LIMIT_INFORMATION
            {
                // Die on an unhandled exception instead of waiting in Windows Error Reporting's dialog.
                LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_PROCESS_MEMORY | JOB_OBJECT_LIMIT_JOB_MEMORY
                             | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
            },
            ProcessMemoryLimit = (nuint)spec.MemoryBytes,
            JobMemoryLimit = (nuint)spec.MemoryBytes,
        };
        if (!SetInformationJobObject(_job, JobObjectExtendedLimitInformation, &limits, (uint)sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION)))
            throw Fail("SetInformationJobObject(limits)");
        // The kernel posts "memory limit hit" to this port; Wine never does (it ignores the limits).
        _port = CreateIoCompletionPort(-1, 0, 0, 1);
        if (_port != 0)
        {
            var assoc = new JOBOBJECT_ASSOCIATE_COMPLETION_PORT { CompletionKey = 1, CompletionPort = _port };
            SetInformationJobObject(_job, JobObjectAssociateCompletionPortInformation, &assoc, (uint)sizeof(JOBOBJECT_ASSOCIATE_COMPLETION_PORT));
        }

        SafeFileHandle outRead, outWrite, errRead, errWrite, inRead, inWrite;
        PROCESS_INFORMATION pi;
        lock (CreateLock)
        {
            if (!CreatePipe(out outRead, out outWrite, 0, 0) || !CreatePipe(out errRead, out errWrite, 0, 0)
                || !CreatePipe(out inRead, out inWrite, 0, 0))
                throw Fail("CreatePipe");
            foreach (var h in new[] { outWrite, errWrite, inRead }) SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
            var si = new STARTUPINFOEXW
            {
                StartupInfo = new STARTUPINFOW
                {
                    cb = sizeof(STARTUPINFOEXW), dwFlags = STARTF_USESTDHANDLES,
                    hStdInput = inRead.DangerousGetHandle(), hStdOutput = outWrite.DangerousGetHandle(), hStdError = errWrite.DangerousGetHandle(),
                },
            };
            var commandLine = WindowsCommandLine.Build(spec.FileName, spec.Args) + "\0";
            var env = EnvironmentBlock(spec.Env);
            var flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP;
            // The child inherits exactly its three pipe ends (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), not whatever else is
            // inheritable in the harness at that moment (a pipe of a tool .NET is starting on another thread).
            var inherit = stackalloc nint[] { si.StartupInfo.hStdInput, si.StartupInfo.hStdOutput, si.StartupInfo.hStdError };
            nuint size = 0;
            InitializeProcThreadAttributeList(0, 1, 0, ref size);
            var list = size > 0 ? Marshal.AllocHGlobal((nint)size) : 0;
            if (list != 0 && InitializeProcThreadAttributeList(list, 1, 0, ref size)
                && UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit, (nuint)(3 * sizeof(nint)), 0, 0))
            {
                si.lpAttributeList = list;
                flags |= EXTENDED_STARTUPINFO_PRESENT;
            }
            else si.StartupInfo.cb = sizeof(STARTUPINFOW);
            bool ok;
            int error;
            try
            {
                fixed (char* cl = commandLine)
                fixed (char* e = env)
                    ok = CreateProcess(null, cl, 0, 0, true, flags, e, spec.WorkDir, &si, &pi);
                error = Marshal.GetLastPInvokeError();
            }
            finally
            {
                if (si.lpAttributeList != 0) DeleteProcThreadAttributeList(list);
                if (list != 0) Marshal.FreeHGlobal(list);
            }
            // The child has its ends now; ours must go, or the pipes never report end of file.
            outWrite.Dispose();
            errWrite.Dispose();
            inRead.Dispose();
            if (!ok)
            {
                outRead.Dispose(); errRead.Dispose(); inWrite.Dispose(); _job.Dispose();
                throw new Win32Failure($"CreateProcess({spec.FileName})", error);
            }
        }
        inWrite.Dispose();   // stdin: at end of file at once, as the Linux path closes it
        _process = pi.hProcess;
        Pid = pi.dwProcessId;
        if (!AssignProcessToJobObject(_job, pi.hProcess))
        {
            var failure = Fail("AssignProcessToJobObject");
            TerminateProcessHandle(pi.hProcess, 1);
            CloseHandle(pi.hThread);
            outRead.Dispose(); errRead.Dispose(); _job.Dispose();
            throw failure;
        }
        ResumeThread(pi.hThread);
        CloseHandle(pi.hThread);
        _stdout = Read(outRead, false, onLine);
        _stderr = Read(errRead, true, onLine);
    }

    // A thread of its own per pipe: a blocking read on a pool thread holds it for the whole run, and with two pipes
    // per run on a 2-core machine the pool starved (under Wine at load 20 the shmem family sampled every 3 s).
    private static Task Read(SafeFileHandle pipe, bool stderr, Action<string?, bool> onLine) => Task.Factory.StartNew(() =>
    {
        using var reader = new StreamReader(new FileStream(pipe, FileAccess.Read, 4096, isAsync: false));
        while (reader.ReadLine() is { } line) onLine(line, stderr);
    }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    public bool HasExited => WaitForSingleObject(_process, 0) == WAIT_OBJECT_0;

    public Task WaitForExitAsync()
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var wait = new ProcessWaitHandle(_process);
        ThreadPool.RegisterWaitForSingleObject(wait, (_, _) => { done.TrySetResult(); wait.Dispose(); }, null, -1, executeOnlyOnce: true);
        return done.Task;
    }

    /// <summary>The exit code as the process set it (an NTSTATUS such as 0xC0000005 after a crash).</summary>
    public uint ExitCode => GetExitCodeProcess(_process, out var code) ? code : uint.MaxValue;

    /// <summary>Pids of the processes in the job now.</summary>
    public IReadOnlyList<int> Members()
    {
        const int max = 1024;
        var buffer = new byte[8 + max * sizeof(nuint)];
        fixed (byte* b = buffer)
        {
            if (!QueryInformationJobObject(_job, JobObjectBasicProcessIdList, b, (uint)buffer.Length, out _)) return [];
            var listed = *(uint*)(b + 4);
            var ids = (nuint*)(b + 8);
            return Enumerable.Range(0, (int)Math.Min(listed, max)).Select(i => (int)ids[i]).ToList();
        }
    }

    public (uint Total, uint Active) ProcessCounts()
    {
        JOBOBJECT_BASIC_ACCOUNTING_INFORMATION a;
        return QueryInformationJobObject(_job, JobObjectBasicAccountingInformation, &a, (uint)sizeof(JOBOBJECT_BASIC_ACCOUNTING_INFORMATION), out _)
            ? (a.TotalProcesses, a.ActiveProcesses) : (0, 0);
    }

    /// <summary>The user and kernel time of every process the job ever held, in seconds.</summary>
    public double? CpuSeconds()
    {
        JOBOBJECT_BASIC_ACCOUNTING_INFORMATION a;
        return QueryInformationJobObject(_job, JobObjectBasicAccountingInformation, &a, (uint)sizeof(JOBOBJECT_BASIC_ACCOUNTING_INFORMATION), out _)
            ? (a.TotalUserTime + a.TotalKernelTime) / 1e7 : null;
    }

    /// <summary>The limits the job holds and its peak commit, as the kernel reports them.</summary>
    public JOBOBJECT_EXTENDED_LIMIT_INFORMATION Limits()
    {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION info;
        QueryInformationJobObject(_job, JobObjectExtendedLimitInformation, &info, (uint)sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION), out _);
        return info;
    }

    /// <summary>
    /// Commit of the job's processes now: their PagefileUsage summed, the commit charge (Windows reports PrivateUsage as
    /// the same number; Wine 8 leaves PrivateUsage 0 and fills PagefileUsage).
    /// </summary>
    public long CommitBytes() => Members().Sum(pid => Counters(pid)?.Pagefile ?? 0);

    // The job keeps only its peak commit; the commit now is the members'.
    public long MemoryNow() => CommitBytes();

    // The kernel refused memory to a job member: the facade ends the run, as the cgroup's OOM kill does on Linux.
    public bool OverMemoryCap(long used) => MemoryLimitHit;

    public int Stop() => KillTree();

    void IRunSession.KillTree() => KillTree();

    public SessionEnd Finish()
    {
        var peak = (long)Limits().PeakJobMemoryUsed;
        var capped = MemoryLimitHit;
        KillTree();
        DrainOutput(TimeSpan.FromSeconds(10));
        var (code, signal) = WindowsExit.Describe(ExitCode);
        return new SessionEnd(code, signal, peak, capped) { CpuSeconds = _cpuClock ? CpuSeconds() : null };
    }

    /// <summary>Whether the kernel said a process or the job hit its memory limit.</summary>
    public bool MemoryLimitHit
    {
        get
        {
            while (_port != 0 && GetQueuedCompletionStatus(_port, out var message, out _, out _, 0))
                if (message is JOB_OBJECT_MSG_PROCESS_MEMORY_LIMIT or JOB_OBJECT_MSG_JOB_MEMORY_LIMIT) _memoryLimitHit = true;
            return _memoryLimitHit;
        }
    }

    /// <summary>Every process of the job, however deep; returns how many were running.</summary>
    public int KillTree()
    {
        if (_job.IsClosed) return 0;
        var active = (int)ProcessCounts().Active;
        TerminateJobObject(_job, 1);
        return active;
    }

    /// <summary>Waits until the output pipes are drained (every holder of their write ends is gone).</summary>
    public bool DrainOutput(TimeSpan patience) => Task.WaitAll([_stdout, _stderr], patience);

    public void Dispose()
    {
        if (_job.IsClosed) return;
        TerminateJobObject(_job, 1);
        _job.Dispose();
        if (_port != 0) CloseHandle(_port);
        CloseHandle(_process);
    }

    private sealed class ProcessWaitHandle : WaitHandle
    {
        public ProcessWaitHandle(nint process) => SafeWaitHandle = new SafeWaitHandle(process, ownsHandle: false);
    }
}
