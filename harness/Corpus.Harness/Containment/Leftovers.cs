namespace Corpus.Harness.Containment;

/// <summary>
/// What killed harnesses of this checkout left behind, and its removal. Only what a ledger in this checkout's
/// .cache/ledger/ names, and only when the ledger's owner (pid and start time) is provably dead: another checkout's
/// runs, a live harness's runs and a stranger's files are never touched.
/// </summary>
/// <param name="Registry">What each registry fixture left applied came to (restored, or why not).</param>
/// <param name="Teardowns">Teardown commands run (a subject kind's cell isolation undone) that ended with exit 0.</param>
public sealed record Leftovers(int Cgroups, int Processes, int Ledgers, int ShmEntries, int PerfMaps, int Cores,
                               IReadOnlyList<string>? Registry = null, int Teardowns = 0)
{
    public bool Any => Cgroups + Processes + Ledgers + ShmEntries + PerfMaps + Cores + Teardowns + (Registry?.Count ?? 0) > 0;

    public override string ToString() =>
        $"removed what killed harnesses left: {Cgroups} cgroup(s) ({Processes} process(es) killed), {Ledgers} ledger(s), "
        + $"{ShmEntries} /dev/shm entr{(ShmEntries == 1 ? "y" : "ies")}, {PerfMaps} perf map(s), {Cores} core(s)"
        + (Teardowns > 0 ? $", {Teardowns} teardown(s)" : "")
        + (Registry is { Count: > 0 } r ? "; " + string.Join("; ", r) : "");

    /// <summary>Whether the owner "PID-START" (a harness: pid and start time) is provably dead: no process has that pid
    /// with that start time, so a reused pid is not taken for it.</summary>
    public static bool OwnerDead(string owner) =>
        owner.Split('-') is [var p, var st] && int.TryParse(p, out var pid) && long.TryParse(st, out var start)
        && !ProcStat.Alive(pid, start);

    public static Leftovers Clean(string ledgerDir, Capture.IToolRunner tools)
    {
        int cgroups = 0, processes = 0, ledgers = 0, maps = 0, cores = 0, teardowns = 0;
        // A Windows harness's runs die with their Job Objects; what it ledgers is registry fixtures.
        if (!IHost.Current.Ledgered) return CleanWindows(ledgerDir, tools);
        var registry = new List<string>();
        if (Directory.Exists(ledgerDir))
            foreach (var ledger in Directory.GetFiles(ledgerDir, "harness-*.ledger"))
            {
                var owner = Path.GetFileNameWithoutExtension(ledger)["harness-".Length..];
                if (!OwnerDead(owner)) continue;
                string[] entries;
                try { entries = File.ReadAllLines(ledger); }
                catch (IOException) { continue; }
                // Registry fixtures first: a cell's isolation (a Wine prefix) must still be there to restore in; teardowns
                // once the runs that used the isolation are dead; unfinished runs' dumps after their prefixes are gone.
                var parsed = entries.Select(LedgerEntry.Parse)
                                    .OrderBy(e => e.Kind switch { "reg" => 0, "teardown" => 2, "run" => 3, _ => 1 }).ToList();
                foreach (var (kind, fields) in parsed)
                {
                    var what = fields.Length > 0 ? fields[0] : "";
                    switch (kind)
                    {
                        // Only a run cgroup named after this owner, under a cgroup mount.
                        case "cg" when what.StartsWith("/sys/fs/cgroup/") && Path.GetFileName(what).StartsWith(owner + "-")
                                       && Directory.Exists(what):
                            var cg = MemoryCgroup.Open(what);
                            processes += cg.Members().Count;
                            if (cg.Remove()) cgroups++;
                            break;
                        // The kernel never reuses a pid that is still a group's id, so the group is the run's unless a
                        // new process has that pid (another start time), and then the run's group is empty anyway.
                        case "pg" or "tool" when int.TryParse(what, out var pgid) && fields.Length > 1 && long.TryParse(fields[1], out var start)
                                       && (ProcStat.StartTime(pgid) is not { } now || now == start):
                            if (Native.Kill(-pgid, Native.SIGKILL)) processes++;
                            break;
                        // The map of a run's process; a live process with that pid is someone else now.
                        case "map" when int.TryParse(what, out var pid) && !Directory.Exists($"/proc/{pid}"):
                            var removed = false;
                            foreach (var file in ContainedProcess.PerfMapFiles(pid)) removed |= TryDelete(file);
                            if (removed) maps++;
                            break;
                        // What a subject kind registered to undo its cell's isolation (Supervisor.AddTeardown).
                        case "teardown" when fields.Length > 0:
                            if (RunTeardown(fields)) teardowns++;
                            break;
                        // A registry fixture applied and never restored (harness/Corpus.Harness/Fixtures).
                        case "reg" when Directory.Exists(what):
                            registry.Add(RestoreRegistry(what, tools));
                            break;
                        // A run the harness never finished (no summary): its dumps and cores go, its logs stay.
                        case "run" when Directory.Exists(what) && !File.Exists(Path.Combine(what, "summary.json")):
                            // Never through a link: a Wine prefix's dosdevices/z: is the host's root.
                            foreach (var dump in Directory.EnumerateFiles(what, "*", new EnumerationOptions
                                     {
                                         RecurseSubdirectories = true, AttributesToSkip = FileAttributes.ReparsePoint, IgnoreInaccessible = true,
                                     }).Where(IsDumpName).ToList())
                                if (TryDelete(dump)) cores++;
                            break;
                        // A core the kernel wrote into a crash-capture run's folder before the harness could read it.
                        case "core" when Directory.Exists(what):
                            foreach (var core in Directory.GetFiles(what, "core*").Where(IsCoreName))
                                if (TryDelete(core)) cores++;
                            break;
                    }
                }
                RemoveRuntimeFiles(owner);
                if (TryDelete(ledger)) ledgers++;
            }
        var (shm, shmLedgers) = ShmJanitor.CleanStale(ledgerDir);
        return new Leftovers(cgroups, processes, ledgers + shmLedgers, shm, maps, cores, registry, teardowns);
    }

    /// <summary>A dead harness's registry fixture, restored from its saved exports; what it came to, as a line.</summary>
    private static string RestoreRegistry(string stateDir, Capture.IToolRunner tools)
    {
        try { return Fixtures.RegistryFixture.RestoreFromLedger(stateDir, tools); }
        catch (Exception e) when (e is IOException or System.Text.Json.JsonException or InvalidDataException)
        {
            return $"registry fixture {stateDir}: not restored: {e.Message}";
        }
    }

    /// <summary>The registry fixtures of dead Windows harnesses, restored from their saved exports.</summary>
    private static Leftovers CleanWindows(string ledgerDir, Capture.IToolRunner tools)
    {
        var registry = new List<string>();
        var ledgers = 0;
        if (!Directory.Exists(ledgerDir)) return new Leftovers(0, 0, 0, 0, 0, 0, registry);
        foreach (var ledger in Directory.GetFiles(ledgerDir, "winharness-*.ledger"))
        {
            if (!WindowsOwnerDead(Path.GetFileNameWithoutExtension(ledger)["winharness-".Length..])) continue;
            string[] entries;
            try { entries = File.ReadAllLines(ledger); }
            catch (IOException) { continue; }
            foreach (var (_, fields) in entries.Select(LedgerEntry.Parse).Where(e => e.Kind == "reg"))
                if (fields is [var dir] && Directory.Exists(dir)) registry.Add(RestoreRegistry(dir, tools));
            if (TryDelete(ledger)) ledgers++;
        }
        return new Leftovers(0, 0, ledgers, 0, 0, 0, registry);
    }

    /// <summary>A Windows owner "PID-TICKS" is dead unless a process with that pid started at those ticks (UTC).</summary>
    private static bool WindowsOwnerDead(string owner)
    {
        if (owner.Split('-') is not [var p, var t] || !int.TryParse(p, out var pid) || !long.TryParse(t, out var ticks)) return false;
        try
        {
            using var proc = System.Diagnostics.Process.GetProcessById(pid);
            return proc.HasExited || proc.StartTime.ToUniversalTime().Ticks != ticks;
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception) { return true; }
    }

    /// <summary>Runs a teardown command of the ledger (a minute at most); whether it ended with exit 0.</summary>
    private static bool RunTeardown(string[] command)
    {
        var psi = new System.Diagnostics.ProcessStartInfo(command[0]) { UseShellExecute = false, RedirectStandardInput = true };
        foreach (var a in command[1..]) psi.ArgumentList.Add(a);
        try
        {
            using var p = System.Diagnostics.Process.Start(psi)!;
            p.StandardInput.Close();
            if (p.WaitForExit(60_000)) return p.ExitCode == 0;
            p.Kill(entireProcessTree: true);
            return false;
        }
        catch (System.ComponentModel.Win32Exception) { return false; }
    }

    /// <summary>
    /// The dead harness's own .NET debugger pipes and diagnostic socket, named after its pid and start time (its owner
    /// key): the runtime removes them only at a clean exit. The supervisor does this at once; this is for when it could not.
    /// </summary>
    internal static void RemoveRuntimeFiles(string owner)
    {
        foreach (var dir in new[] { Path.GetTempPath(), "/tmp/" }.Distinct())
            foreach (var name in new[] { $"clr-debug-pipe-{owner}-in", $"clr-debug-pipe-{owner}-out", $"dotnet-diagnostic-{owner}-socket" })
                TryDelete(Path.Combine(dir, name));
    }

    /// <summary>What captures write: kernel cores, createdump/procdump cores (snapshot-N.core), Windows minidumps.</summary>
    private static bool IsDumpName(string path) =>
        IsCoreName(path) || Path.GetExtension(path) is ".core" or ".dmp" or ".mdmp";

    private static bool IsCoreName(string path) =>
        Path.GetFileName(path) is var n && (n == "core" || n.StartsWith("core.") && int.TryParse(n[5..], out _));

    private static bool TryDelete(string file)
    {
        try
        {
            if (!File.Exists(file)) return false;
            File.Delete(file);
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException) { return false; }
    }
}
