using System.Diagnostics;

namespace Corpus.Harness.Containment;

/// <summary>
/// The harness's dead-man switch. One small process per harness (supervisor.sh), started at the first contained run
/// or tool, in its own session, outside every run cgroup, ignoring INT/TERM/HUP. It reads a pipe whose only write end
/// this process holds (.NET opens pipes O_CLOEXEC, so no run inherits it) and learns every run cgroup, run and tool
/// process group and teardown as it comes and goes. When the harness dies, even by SIGKILL, the kernel closes the pipe;
/// on EOF the supervisor removes the harness's .NET IPC files, kills what is still listed, removes the cgroups and runs
/// the teardowns. The same lines go to a ledger in the checkout's .cache/ledger/ so that
/// a later `corpus run` or `corpus clean` can finish the job if the supervisor itself was killed.
/// </summary>
public static class Supervisor
{
    private static readonly object Lock = new();
    private static readonly HashSet<string> Live = [];
    private static Process? _process;
    private static string? _ledger;

    /// <summary>This harness: pid and start time (/proc/PID/stat field 22), so a reused pid is never taken for it.</summary>
    public static string Owner => IHost.Current.Owner;

    /// <summary>The supervisor's pid, once a contained run has started it.</summary>
    public static int? Pid { get { lock (Lock) return _process?.Id; } }

    /// <summary>Waits until every run cgroup and process group on record is gone (their runs' Dispose), or the patience ends.</summary>
    public static bool WaitIdle(TimeSpan patience)
    {
        var until = DateTime.UtcNow + patience;
        while (true)
        {
            lock (Lock) if (!Live.Any(e => e.StartsWith("cg ") || e.StartsWith("pg "))) return true;
            if (DateTime.UtcNow > until) return false;
            Thread.Sleep(20);
        }
    }

    /// <summary>
    /// A Windows harness's ledger has its own name: its owner is a Windows pid, which a Linux harness of the same
    /// checkout (the Windows harness under Wine) must not judge by /proc.
    /// </summary>
    public static string LedgerName => IHost.Current.Ledgered ? $"harness-{Owner}.ledger" : $"winharness-{Owner}.ledger";

    /// <summary>Also keep the ledger in this checkout's ledger folder (the harness's `run` does; tests need not).</summary>
    public static void UseLedger(string ledgerDir)
    {
        // On Windows each run's Job Object dies with the harness (kill-on-job-close), so only registry fixtures are
        // ledgered there: the machine's registry outlives any harness.
        lock (Lock)
        {
            Directory.CreateDirectory(ledgerDir);
            _ledger = Path.Combine(ledgerDir, LedgerName);
            WriteLedger();
        }
    }

    /// <summary>
    /// Something a killed harness would leave behind, as a <see cref="LedgerEntry"/> line: "cg DIR", "pg PGID START",
    /// "tool PGID START", "teardown COMMAND ARG…", "map PID", "core DIR", "reg DIR", "run DIR" (a run without its summary yet:
    /// its dumps go when it is found dead). The first four also go to the
    /// supervisor.
    /// </summary>
    public static void Add(string entry)
    {
        lock (Lock)
        {
            if (!Live.Add(entry)) return;
            if (ForSupervisor(entry)) Send(entry);
            WriteLedger();
        }
    }

    public static void Remove(string entry)
    {
        lock (Lock)
        {
            if (!Live.Remove(entry)) return;
            if (ForSupervisor(entry)) Send("-" + entry);
            WriteLedger();
        }
    }

    /// <summary>
    /// What a subject kind must undo if the harness dies before it does (its cell's isolation): the supervisor, or a
    /// later run from the ledger, runs COMMAND ARG… after every run of the harness is dead. The entry to remove again.
    /// </summary>
    public static string AddTeardown(string command, params string[] args)
    {
        var entry = LedgerEntry.Format("teardown", [command, .. args]);
        Add(entry);
        return entry;
    }

    /// <summary>
    /// Starts the supervisor now if it is not running, so that a process about to start is on its list within
    /// microseconds of its start rather than after the supervisor's own start (tens of milliseconds under load).
    /// </summary>
    public static void Ready()
    {
        if (!IHost.Current.Ledgered) return;
        lock (Lock)
        {
            try { if (_process is null || _process.HasExited) Start(); }
            catch (InvalidOperationException) { _process = null; }
        }
    }

    private static bool ForSupervisor(string entry) =>
        entry.StartsWith("cg ") || entry.StartsWith("pg ") || entry.StartsWith("tool ") || entry.StartsWith("teardown ");

    // The ledger holds what is live now; no ledger means nothing to clean.
    private static void WriteLedger()
    {
        if (_ledger is null) return;
        try
        {
            if (Live.Count == 0) File.Delete(_ledger);
            else File.WriteAllLines(_ledger, Live);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
    }

    private static void Send(string line)
    {
        if (!IHost.Current.Ledgered) return;
        for (var attempt = 0; attempt < 2; attempt++)
        {
            try
            {
                if (_process is null || _process.HasExited) Start();
                _process!.StandardInput.WriteLine(line);
                _process.StandardInput.Flush();
                return;
            }
            // Someone killed the supervisor: start a new one, which learns everything live from the replay in Start.
            catch (IOException) { _process = null; }
        }
    }

    private static void Start()
    {
        try { _process?.Dispose(); } catch (InvalidOperationException) { }
        var psi = new ProcessStartInfo("setsid") { RedirectStandardInput = true, UseShellExecute = false };
        // The script travels in the environment so that ps shows a short command line.
        psi.Environment["CORPUS_SUPERVISOR"] = ScriptText;
        foreach (var a in new[] { "bash", "-c", "eval \"$CORPUS_SUPERVISOR\"", "corpus-supervisor", Environment.ProcessId.ToString(), Owner })
            psi.ArgumentList.Add(a);
        _process = Process.Start(psi) ?? throw new InvalidOperationException("cannot start the corpus supervisor");
        foreach (var entry in Live.Where(ForSupervisor))
            _process.StandardInput.WriteLine(entry);
    }

    internal static string ScriptText => Script.Value;

    private static readonly Lazy<string> Script = new(() =>
    {
        using var s = typeof(Supervisor).Assembly.GetManifestResourceStream("Corpus.Harness.Containment.supervisor.sh")
                      ?? throw new InvalidOperationException("supervisor.sh is not embedded in the harness");
        return new StreamReader(s).ReadToEnd();
    });
}

internal static class ProcStat
{
    /// <summary>Field 22 of /proc/PID/stat: start time in clock ticks after boot; null when no such process.</summary>
    public static long? StartTime(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return long.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[19]);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>Whether that process still runs: same pid, same start time, and not a zombie (which holds nothing).</summary>
    public static bool Alive(int pid, long start)
    {
        if (StartTime(pid) != start) return false;
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[stat.LastIndexOf(')') + 2] != 'Z';
        }
        catch (IOException) { return false; }
    }
}
