using Corpus.Harness.Containment;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture;

/// <summary>
/// Where a Windows debugging tool is: the path in its variable (CORPUS_PROCDUMP, CORPUS_TTD) when set, else the first
/// match on PATH. Absent, it is unavailable with the reason, which reaches the cell's capture errors.
/// </summary>
public static class WindowsTools
{
    public const string ProcDumpVariable = "CORPUS_PROCDUMP", TtdVariable = "CORPUS_TTD";

    /// <param name="configured">The variable's value (null: read it from the environment).</param>
    /// <param name="searchPath">PATH (null: the environment's).</param>
    public static (string? Path, string? Unavailable) Locate(string exe, string variable, string install, bool? isWindows = null,
                                                            string? configured = null, string? searchPath = null)
    {
        if (!(isWindows ?? IHost.Current.Platform == IHost.Windows)) return (null, $"{exe} runs only on Windows");
        configured ??= Environment.GetEnvironmentVariable(variable);
        if (!string.IsNullOrEmpty(configured))
            return File.Exists(configured) ? (configured, null) : (null, $"{variable}={configured}: no such file");
        searchPath ??= Environment.GetEnvironmentVariable("PATH") ?? "";
        var found = searchPath.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(d => Path.Combine(d.Trim('"'), exe)).FirstOrDefault(File.Exists);
        return found is not null ? (found, null) : (null, $"{exe} is not on PATH and {variable} is not set ({install})");
    }
}

/// <summary>
/// Sysinternals procdump.exe on Windows: a full dump (-ma) of a live process per timed snapshot (the harness keeps
/// the -s/-n schedule, so a snapshot the process did not live to see is a capture error), a crash capture that
/// launches the program under procdump (-e -x), a commit trigger (-m) and a hung-window trigger (-h).
/// </summary>
public sealed class WindowsProcDump : ICaptureBackend
{
    private const string Install = "install Sysinternals ProcDump, e.g. choco install procdump, or set CORPUS_PROCDUMP to procdump64.exe";
    private readonly IToolRunner _runner;

    /// <param name="exe">A configured path; null: CORPUS_PROCDUMP, then PATH.</param>
    public WindowsProcDump(IToolRunner runner, string? exe = null, bool? isWindows = null, string? searchPath = null)
    {
        _runner = runner;
        (Path, Unavailable) = WindowsTools.Locate("procdump.exe", WindowsTools.ProcDumpVariable, Install, isWindows, exe, searchPath);
    }

    public string Name => "procdump.exe";
    /// <summary>Read every thread's stack from each dump with cdb (off in tests that fake procdump).</summary>
    public bool ReadStacks { get; init; } = true;
    public string? Path { get; }
    public string? Unavailable { get; }

    /// <summary>-e -x: launch and dump on an unhandled exception (a crash).</summary>
    public static IReadOnlyList<string> CrashArgs(string dir, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-ma", "-e", "-x", dir, program, .. args];

    /// <summary>The crash capture: the program runs as procdump's child, inside the same Job Object as procdump.</summary>
    public Launch WrapCrash(Launch launch, string dir) =>
        Unavailable is { } why ? throw new PlatformNotSupportedException(why)
            : launch with { File = Path!, Args = CrashArgs(dir, launch.File, launch.Args) };

    public Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var file = System.IO.Path.Combine(dir, $"snapshot-{index}.dmp");
        return Task.FromResult(Dump(["-accepteula", "-ma", target.Pid.ToString(), file], file, target.Elapsed, TimeSpan.FromMinutes(5)));
    }

    /// <summary>Runs procdump; the dump is the named .dmp file, or the newest .dmp in the folder procdump was given.</summary>
    private CaptureRecord Dump(IReadOnlyList<string> args, string fileOrDir, double at, TimeSpan timeout)
    {
        if (Unavailable is { } why) throw new PlatformNotSupportedException(why);
        var before = DateTime.UtcNow;
        var r = _runner.Run(Path!, args, timeout);
        // procdump exits with the number of dumps it wrote, or -1 (or -2) on an error.
        if (r.TimedOut || r.ExitCode < 0) throw new InvalidOperationException(r.Describe(Name));
        var file = fileOrDir.EndsWith(".dmp", StringComparison.OrdinalIgnoreCase) ? fileOrDir
            : Directory.Exists(fileOrDir) ? new DirectoryInfo(fileOrDir).GetFiles("*.dmp").Where(f => f.LastWriteTimeUtc >= before.AddSeconds(-2))
                                            .OrderByDescending(f => f.LastWriteTimeUtc).FirstOrDefault()?.FullName : null;
        if (file is null || !File.Exists(file)) throw new InvalidOperationException($"{Name} wrote no dump: {r.Describe(Name)}");
        var (threads, note) = ReadStacks ? CdbStacks.Read(_runner, file, System.IO.Path.ChangeExtension(file, ".threads.txt")) : ([], null);
        return new CaptureRecord(Name, file, new FileInfo(file).Length, r.Seconds, at, threads,
                                 note ?? "a Windows minidump: open it in WinDbg (!analyze -v, ~*k)");
    }
}

/// <summary>
/// Time Travel Debugging on Windows (TTD.exe; the Linux counterpart is gdb 'record full'): a run is launched under
/// TTD.exe, which records it into a .run trace; -ring keeps only the last maxFile MB so long runs stay bounded.
/// </summary>
public sealed class WindowsTtd
{
    /// <summary>Set to "full" or "ring:MB" to record every run of a Windows cell (corpus run on Windows only).</summary>
    public const string TraceVariable = "CORPUS_TTD_TRACE";
    private const string Install = "install WinDbg's TTD (winget install Microsoft.TimeTravelDebugging), or set CORPUS_TTD to TTD.exe";

    public WindowsTtd(string? exe = null, bool? isWindows = null, string? searchPath = null) =>
        (Path, Unavailable) = WindowsTools.Locate("TTD.exe", WindowsTools.TtdVariable, Install, isWindows, exe, searchPath);

    public string? Path { get; }
    public string? Unavailable { get; }

    public static IReadOnlyList<string> LaunchArgs(string dir, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-out", dir, "-launch", program, .. args];

    /// <summary>A ring buffer keeps long runs bounded: only the last maxFileMB of the trace survive.</summary>
    public static IReadOnlyList<string> RingArgs(string dir, int maxFileMB, string program, IReadOnlyList<string> args) =>
        ["-accepteula", "-ring", "-maxFile", maxFileMB.ToString(), "-out", dir, "-launch", program, .. args];

    /// <summary>"full" → null, "ring:512" → 512; anything else is an error naming the variable.</summary>
    public static int? ParseMode(string mode) =>
        mode == "full" ? null
        : mode.StartsWith("ring:") && int.TryParse(mode[5..], out var mb) && mb > 0 ? mb
        : throw new ArgumentException($"{TraceVariable}={mode}: use full or ring:MB (a positive number of megabytes)");

    /// <summary>The run launched under TTD.exe, which records the program and its children into dir.</summary>
    public Launch Wrap(Launch launch, string dir, int? ringMB) =>
        Unavailable is { } why ? throw new PlatformNotSupportedException(why)
            : launch with { File = Path!, Args = ringMB is { } mb ? RingArgs(dir, mb, launch.File, launch.Args) : LaunchArgs(dir, launch.File, launch.Args) };
}

/// <summary>
/// Every thread's stack from a Windows minidump, through cdb (Debugging Tools for Windows): `~*k` in batch mode. Found
/// through CORPUS_CDB, PATH, or the Windows SDK's Debuggers folder; absent, snapshots carry no stacks and say why.
/// </summary>
public static partial class CdbStacks
{
    public const string Variable = "CORPUS_CDB";

    public static (string? Path, string? Unavailable) Locate(bool? isWindows = null, string? configured = null, string? searchPath = null)
    {
        var found = WindowsTools.Locate("cdb.exe", Variable, "install the Windows SDK's Debugging Tools for Windows", isWindows, configured, searchPath);
        if (found.Path is not null || !(isWindows ?? IHost.Current.Platform == IHost.Windows) || !string.IsNullOrEmpty(configured ?? Environment.GetEnvironmentVariable(Variable)))
            return found;
        var sdk = System.IO.Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.ProgramFilesX86), "Windows Kits", "10", "Debuggers", "x64", "cdb.exe");
        return File.Exists(sdk) ? (sdk, null) : found;
    }

    public static (IReadOnlyList<ThreadStack> Threads, string? Note) Read(IToolRunner runner, string dump, string textFile)
    {
        var (cdb, why) = Locate();
        if (cdb is null) return ([], $"no stacks read: {why}");
        var r = runner.Run(cdb, ["-z", dump, "-lines", "-c", "~*k 50; q"], TimeSpan.FromMinutes(3));
        File.WriteAllText(textFile, r.Stdout + r.Stderr);
        var threads = Parse(r.Stdout);
        return (threads, threads.Count == 0 ? $"cdb listed no threads: {r.Describe("cdb")}" : null);
    }

    /// <summary>
    /// cdb's `~*k`: a header per thread ("   0  Id: 1a2c.1b3c Suspend: …"), a column line, then frames whose last column is
    /// the call site ("00 000000a1`2b3fe8d8 00007ffa`1c2d3e4f KERNELBASE!SleepEx+0x9e").
    /// </summary>
    public static IReadOnlyList<ThreadStack> Parse(string text)
    {
        var threads = new List<ThreadStack>();
        string? thread = null;
        var frames = new List<string>();
        void Flush()
        {
            if (thread is not null) threads.Add(new ThreadStack(thread, [.. frames]));
            frames.Clear();
        }
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.TrimEnd('\r');
            if (ThreadHeader().Match(line) is { Success: true } h)
            {
                Flush();
                thread = $"thread {h.Groups[1].Value} (id {h.Groups[2].Value})";
            }
            else if (thread is not null && Frame().Match(line) is { Success: true } f) frames.Add(f.Groups[1].Value);
        }
        Flush();
        return threads;
    }

    [System.Text.RegularExpressions.GeneratedRegex(@"^[ .#]\s*(\d+)\s+Id:\s+([0-9a-f]+\.[0-9a-f]+)\s")]
    private static partial System.Text.RegularExpressions.Regex ThreadHeader();

    [System.Text.RegularExpressions.GeneratedRegex(@"^[0-9a-f]{2,}\s+[0-9a-f`]+\s+[0-9a-f`]+\s+(\S.*?)\s*(?:\[.*\])?$")]
    private static partial System.Text.RegularExpressions.Regex Frame();
}
