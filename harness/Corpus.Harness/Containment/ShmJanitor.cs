namespace Corpus.Harness.Containment;

/// <summary>
/// Removes /dev/shm entries that a run left behind. Named shared memory outlives every process, so a killed
/// repro (or a crashed Mono, which leaves /dev/shm/mono.PID) would otherwise leak it for good. Only entries that
/// appeared during the run, that nobody holds, and whose name carries the pid of a process of the run are ours to
/// remove; anything else new is reported, not touched, since another program on the host may have made it.
/// A ledger file lets the next harness finish the job when this one is killed mid-run.
/// </summary>
public sealed partial class ShmJanitor : IDisposable
{
    public const string ShmDir = "/dev/shm";
    private const string PidsLine = "#pids";
    private readonly HashSet<string> _before;
    private readonly HashSet<int> _pids = [];
    private readonly string _ledger;

    public IReadOnlyList<string> Removed { get; private set; } = [];
    /// <summary>New, unheld entries that carry none of the run's pids: left alone.</summary>
    public IReadOnlyList<string> Unattributed { get; private set; } = [];

    private static int _sequence;

    public ShmJanitor(string ledgerDir)
    {
        _before = List().ToHashSet();
        Directory.CreateDirectory(ledgerDir);
        // One ledger per run: runs of one harness may overlap (parallel race runs).
        // The owner's pid and start time: a later harness can tell a dead owner from a live one with a reused pid.
        _ledger = Path.Combine(ledgerDir, $"shm-{Supervisor.Owner}-{Interlocked.Increment(ref _sequence)}.ledger");
        WriteLedger();
    }

    /// <summary>A process of this run: entries named after it are the run's.</summary>
    public void Own(int pid)
    {
        lock (_pids) _pids.Add(pid);
        WriteLedger();
    }

    private void WriteLedger()
    {
        lock (_pids) File.WriteAllLines(_ledger, [$"{PidsLine} {string.Join(' ', _pids)}", .. _before]);
    }

    private static IEnumerable<string> List() =>
        Directory.Exists(ShmDir) ? Directory.EnumerateFileSystemEntries(ShmDir).Select(Path.GetFileName).OfType<string>() : [];

    public void Dispose()
    {
        HashSet<int> pids;
        lock (_pids) pids = [.. _pids];
        (Removed, Unattributed) = Sweep(_before, pids);
        File.Delete(_ledger);
    }

    private static (List<string> Removed, List<string> Unattributed) Sweep(HashSet<string> before, HashSet<int> pids)
    {
        var removed = new List<string>();
        var other = new List<string>();
        var fresh = List().Where(n => !before.Contains(n)).ToList();
        if (fresh.Count == 0) return (removed, other);
        // A segment that is open or mapped somewhere is in use, whoever made it: leave it alone.
        var inUse = InUse();
        foreach (var name in fresh.Where(n => !inUse.Contains(n)))
        {
            var numbers = Numbers().Matches(name).Select(m => int.TryParse(m.Value, out var v) ? v : -1);
            if (!numbers.Any(pids.Contains))
            {
                other.Add(name);
                continue;
            }
            try
            {
                File.Delete(Path.Combine(ShmDir, name));
                removed.Add(name);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
        }
        return (removed, other);
    }

    [System.Text.RegularExpressions.GeneratedRegex(@"\d+")]
    private static partial System.Text.RegularExpressions.Regex Numbers();

    private static HashSet<string> InUse()
    {
        var names = new HashSet<string>();
        const string prefix = ShmDir + "/";
        foreach (var proc in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(proc), out _)) continue;
            try
            {
                foreach (var fd in Directory.EnumerateFileSystemEntries(Path.Combine(proc, "fd")))
                    if (new FileInfo(fd).LinkTarget is { } target && target.StartsWith(prefix))
                        names.Add(target[prefix.Length..].Replace(" (deleted)", ""));
                foreach (var line in File.ReadLines(Path.Combine(proc, "maps")))
                    if (line.IndexOf(prefix, StringComparison.Ordinal) is var i and >= 0)
                        names.Add(line[(i + prefix.Length)..].Replace(" (deleted)", ""));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
        }
        return names;
    }

    /// <summary>Finishes the sweep of a harness that died mid-run (its pid no longer lives).</summary>
    /// <returns>The /dev/shm entries removed and the ledgers finished.</returns>
    public static (int Entries, int Ledgers) CleanStale(string ledgerDir)
    {
        if (!Directory.Exists(ledgerDir)) return (0, 0);
        int n = 0, ledgers = 0;
        foreach (var ledger in Directory.GetFiles(ledgerDir, "shm-*.ledger"))
        {
            // shm-PID-START-N; an older harness wrote shm-PID-N, and only its pid can be checked.
            var parts = Path.GetFileNameWithoutExtension(ledger)["shm-".Length..].Split('-');
            var dead = parts.Length >= 3 ? Leftovers.OwnerDead($"{parts[0]}-{parts[1]}")
                : int.TryParse(parts[0], out var pid) && !Directory.Exists($"/proc/{pid}");
            if (!dead) continue;
            var lines = File.ReadAllLines(ledger);
            var pids = lines.FirstOrDefault(l => l.StartsWith(PidsLine))?[PidsLine.Length..]
                           .Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(int.Parse).ToHashSet() ?? [];
            n += Sweep(lines.Where(l => !l.StartsWith(PidsLine)).ToHashSet(), pids).Removed.Count;
            File.Delete(ledger);
            ledgers++;
        }
        return (n, ledgers);
    }
}
