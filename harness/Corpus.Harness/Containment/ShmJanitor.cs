namespace Corpus.Harness.Containment;

/// <summary>
/// Removes /dev/shm entries that appeared during a run. Leaks of named shared memory outlive every process,
/// so a killed repro would otherwise leave them for good. A ledger file lets the next harness finish the job
/// when this one is killed mid-run.
/// </summary>
public sealed class ShmJanitor : IDisposable
{
    public const string ShmDir = "/dev/shm";
    private readonly HashSet<string> _before;
    private readonly string _ledger;

    public IReadOnlyList<string> Removed { get; private set; } = [];

    private static int _sequence;

    public ShmJanitor(string ledgerDir)
    {
        _before = List().ToHashSet();
        Directory.CreateDirectory(ledgerDir);
        // One ledger per run: runs of one harness may overlap (parallel race runs).
        _ledger = Path.Combine(ledgerDir, $"shm-{Environment.ProcessId}-{Interlocked.Increment(ref _sequence)}.ledger");
        File.WriteAllLines(_ledger, _before);
    }

    private static IEnumerable<string> List() =>
        Directory.Exists(ShmDir) ? Directory.EnumerateFileSystemEntries(ShmDir).Select(Path.GetFileName).OfType<string>() : [];

    public void Dispose()
    {
        Removed = Sweep(_before);
        File.Delete(_ledger);
    }

    private static List<string> Sweep(HashSet<string> before)
    {
        var removed = new List<string>();
        var fresh = List().Where(n => !before.Contains(n)).ToList();
        if (fresh.Count == 0) return removed;
        // Someone else's live segment that appeared meanwhile is open or mapped somewhere: leave it alone.
        var inUse = InUse();
        foreach (var name in fresh.Where(n => !inUse.Contains(n)))
        {
            try
            {
                File.Delete(Path.Combine(ShmDir, name));
                removed.Add(name);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
        }
        return removed;
    }

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
    public static int CleanStale(string ledgerDir)
    {
        if (!Directory.Exists(ledgerDir)) return 0;
        var n = 0;
        foreach (var ledger in Directory.GetFiles(ledgerDir, "shm-*.ledger"))
        {
            var owner = Path.GetFileNameWithoutExtension(ledger)["shm-".Length..].Split('-')[0];
            if (int.TryParse(owner, out var pid) && pid != Environment.ProcessId && Directory.Exists($"/proc/{pid}")) continue;
            n += Sweep(File.ReadAllLines(ledger).ToHashSet()).Count;
            File.Delete(ledger);
        }
        return n;
    }
}
