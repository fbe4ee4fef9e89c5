using Corpus.Harness.Containment;
using Corpus.Harness.Fixtures;
using Corpus.Harness.Model;

namespace Corpus.Harness.Subjects;

/// <summary>
/// A Wine cell whose case has a registry fixture: one prefix for the fixture and all the cell's runs, so the runs see
/// what the fixture applied and the restore sees what they left. Its wineserver and Wine's services live in a
/// contained holder (its own cgroup, memory cap and wall-clock cap, killed with the harness); each run's program joins
/// that server from its own run (harness/wine/run.sh with CORPUS_WINE_SHARED). The folder is run-shared, so the
/// supervisor, the ledger's "wine" entry and Dispose take it down like any run's prefix.
/// </summary>
public sealed partial class WineIsolation : IRegistryCell
{
    public const string SharedVariable = "CORPUS_WINE_SHARED";
    private ContainedProcess? _shared;
    private Task<RunResult>? _sharedWait;   // the wait enforces the holder's caps, so it runs all along

    private string SharedDir => Path.Combine(_dir, "run-shared");
    private readonly List<string> _retried = [];

    /// <summary>What each bring-up of the shared prefix that failed said, before one came up.</summary>
    public IReadOnlyList<string> Retried => _retried;

    /// <summary>
    /// The shared prefix, brought up once for the cell. A bring-up that fails never reached the program: it is taken
    /// down and started again, at most <see cref="Runner.RunLauncher.LaunchAttempts"/> times in all, each failure kept
    /// (shared.attemptN.stderr) and said; then the fixture fails naming the stage.
    /// </summary>
    public IRegistryHost OpenRegistry(Subject subject, Budget budget)
    {
        Register();
        for (var attempt = 1; _shared is null; attempt++)
        {
            if (BringUpShared(subject, budget) is not { } err) break;
            var kept = Path.Combine(_dir, $"shared.attempt{attempt}.stderr");
            File.WriteAllText(kept, err + "\n");
            tools.Run("bash", [Path.Combine(_root, "harness", "wine", "cell.sh"), "down", SharedDir], TimeSpan.FromMinutes(1));
            if (attempt == Runner.RunLauncher.LaunchAttempts)
                throw new FixtureException($"the cell's shared Wine prefix did not come up, {attempt} times: {err}");
            _retried.Add($"shared Wine prefix: attempt {attempt} of {Runner.RunLauncher.LaunchAttempts} did not come up: {err} (kept as {Path.GetFileName(kept)})");
        }
        return new WineRegistry(subject.Path, Path.Combine(SharedDir, "env"), tools);
    }

    /// <summary>Starts the holder of the shared prefix; null once it is up, else what its stderr said.</summary>
    private string? BringUpShared(Subject subject, Budget budget)
    {
        Directory.CreateDirectory(_dir);
        var up = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        // Held for the cell: the wall-clock cap is the case's own budget plus what the fixture and the build need.
        var spec = new ProcessSpec("bash",
            ["-c", "\"$1\" up \"$2\" --windows \"$3\" >/dev/null && echo SHARED-UP && exec sleep infinity", "holder",
             Path.Combine(_root, "harness", "wine", "cell.sh"), SharedDir, windows],
            _dir, Path.Combine(_dir, "shared.stdout"), Path.Combine(_dir, "shared.stderr"),
            TimeSpan.FromSeconds(budget.TimeoutSec + 300), (long)budget.MemoryMB << 20,
            new Dictionary<string, string> { ["WINE"] = subject.Path,
                                              ["WINESERVER"] = Path.Combine(Path.GetDirectoryName(subject.Path)!, "wineserver") });
        _shared = new ContainedProcess(spec, (line, _, _) => { if (line.Trim() == "SHARED-UP") up.TrySetResult(); });
        _sharedWait = _shared.WaitAsync();
        var waited = Task.WhenAny(up.Task, _sharedWait, Task.Delay(TimeSpan.FromMinutes(2))).GetAwaiter().GetResult();
        if (waited == up.Task) return null;
        StopShared();
        var err = File.Exists(Path.Combine(_dir, "shared.stderr")) ? File.ReadAllText(Path.Combine(_dir, "shared.stderr")).Trim() : "";
        return err.Length > 0 ? err : "the holder ended without a word";
    }

    /// <summary>The shared prefix's holder when a run that joined its wineserver never reached the program: whether it
    /// is alive, its processes by name, the kernel's OOM kills in its cgroup, and the server's socket.</summary>
    public override string? StateAfterLaunchFailure()
    {
        if (_shared is null) return null;
        if (_sharedWait is { IsCompleted: true } ended)
            return $"the shared prefix's holder had ended ({(ended.IsCompletedSuccessfully ? ended.Result.Status : "faulted")})";
        var names = (_shared.Cgroup?.Members() ?? [])
                    .Select(p => { try { return File.ReadAllText($"/proc/{p}/comm").Trim(); } catch (IOException) { return null; } })
                    .OfType<string>().GroupBy(n => n).Select(g => g.Count() > 1 ? $"{g.Key} ×{g.Count()}" : g.Key);
        var oom = _shared.Cgroup?.OomKilled() == true ? "; the kernel OOM-killed in its cgroup" : "";
        return $"the shared prefix's holder is alive ({string.Join(", ", names)}){oom}; {Sockets()}";
    }

    /// <summary>The wineserver sockets under the shared prefix's TMPDIR (harness/wine/run.sh looks for one there).</summary>
    private string Sockets()
    {
        var tmp = File.Exists(Path.Combine(SharedDir, "env"))
            ? File.ReadLines(Path.Combine(SharedDir, "env")).FirstOrDefault(l => l.StartsWith("TMPDIR="))?["TMPDIR=".Length..] : null;
        if (tmp is null || !Directory.Exists(tmp)) return "no TMPDIR to look for its wineserver's socket in";
        try { return $"{Directory.EnumerateFiles(tmp, "socket", SearchOption.AllDirectories).Count()} wineserver socket(s) under {tmp}"; }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException) { return $"its TMPDIR {tmp}: {e.Message}"; }
    }

    private void StopShared()
    {
        if (_shared is null) return;
        _shared.KillTree();
        try { _sharedWait?.GetAwaiter().GetResult(); }
        catch (OperationCanceledException) { }   // interrupted: killed all the same
        _shared.Dispose();
        _shared = null;
    }
}
