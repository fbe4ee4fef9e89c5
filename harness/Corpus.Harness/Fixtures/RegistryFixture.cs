using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Fixtures;

/// <summary>
/// A key the fixture may change, as it was before: its reg.exe export, or absent; then ParentQuery holds what
/// `reg query PARENT` printed (the parent's own values and subkey names), which must read the same after the restore.
/// </summary>
public sealed record SavePoint(string Key, bool Existed, string? Export, string? ParentQuery = null);

/// <summary>
/// Machine state for a cell that must never outlive it: .reg files applied to a registry, and rolled back.
/// 1. Before: for every key a file names, the highest key that the fixture would create or change (the key itself
///    when it exists, else its topmost missing ancestor) is exported with reg.exe, or recorded as absent.
/// 2. A ledger entry "reg STATE_DIR" is written before anything changes, so a harness killed before step 5 leaves
///    the next `corpus run` or `corpus clean` what it needs to restore (<see cref="RestoreFromLedger"/>).
/// 3. Apply: reg import of each file, in order. Verify: every value line the files leave in place is in the
///    key's export exactly as written, and every deleted key is absent.
/// 4. The cell runs.
/// 5. Restore: each saved key is deleted and its export imported again (or it stays deleted when it was absent);
///    verify: a new export is byte for byte the one from step 1, and an absent key is absent again.
/// </summary>
public sealed class RegistryFixture
{
    private readonly IRegistryHost _host;
    private readonly string _stateDir;
    private readonly List<SavePoint> _saved;

    public string LedgerEntry => Containment.LedgerEntry.Format("reg", _stateDir);
    public IReadOnlyList<SavePoint> Saved => _saved;

    /// <summary>What the apply step verified, for the cell's metrics.</summary>
    public string Applied { get; private set; } = "";
    /// <summary>What the apply checked and the restore found, as counts.</summary>
    public int ValuesReadBack { get; private set; }
    public int DeletedKeysAbsent { get; private set; }
    public int KeysAbsentAgain { get; private set; }
    public int ExportsIdentical { get; private set; }

    private RegistryFixture(IRegistryHost host, string stateDir, List<SavePoint> saved) =>
        (_host, _stateDir, _saved) = (host, stateDir, saved);

    /// <summary>Steps 1–3. Throws FixtureException when a step fails; what was saved is then restored at once.</summary>
    public static RegistryFixture Apply(IRegistryHost host, IReadOnlyList<string> files, string stateDir)
    {
        var parsed = files.Select(f => (File: f, Sections: RegFile.Parse(f))).ToList();
        Directory.CreateDirectory(stateDir);
        var points = new List<string>();
        // Nothing changes before the import, so each key is asked once (every reg.exe under Wine is a process start).
        var known = new Dictionary<string, bool>(StringComparer.OrdinalIgnoreCase);
        bool Known(string k) => known.TryGetValue(k, out var e) ? e : known[k] = Exists(host, k);
        foreach (var key in parsed.SelectMany(p => p.Sections).Select(s => s.Key))
        {
            var point = key;
            // The topmost missing key on the way down: importing creates it and everything below.
            for (var parent = Parent(point); parent is not null && !Known(parent); parent = Parent(point)) point = parent;
            if (!points.Any(p => RegFile.IsAtOrBelow(point, p)))
            {
                points.RemoveAll(p => RegFile.IsAtOrBelow(p, point));
                points.Add(point);
            }
        }
        var saved = new List<SavePoint>();
        for (var i = 0; i < points.Count; i++)
        {
            if (!Known(points[i]))
            {
                // Not the parent's whole export: on Windows that can be hundreds of MB (NGenService's was 200 MB).
                string? query = null;
                if (Parent(points[i]) is { } parent)
                {
                    query = Path.Combine(stateDir, $"before-{i}.parent.txt");
                    File.WriteAllText(query, Query(host, parent));
                }
                saved.Add(new SavePoint(points[i], false, null, query));
                continue;
            }
            var export = Path.Combine(stateDir, $"before-{i}.reg");
            Check(host.Reg(["export", RegFile.Short(points[i]), host.FileArg(export), "/y"]), $"export {points[i]}");
            saved.Add(new SavePoint(points[i], true, export));
        }
        var fixture = new RegistryFixture(host, stateDir, saved);
        File.WriteAllText(Path.Combine(stateDir, "fixture.json"), JsonSerializer.Serialize(
            new LedgerState(host.Spec.ToDictionary(), saved), JsonOptions));
        Supervisor.Add(fixture.LedgerEntry);
        try
        {
            foreach (var (file, sections) in parsed.Where(p => p.Sections.Count > 0))
                Check(host.Reg(["import", host.FileArg(file)]), $"import {file}");
            fixture.Applied = fixture.VerifyApplied(parsed.Select(p => p.Sections));
        }
        catch (FixtureException e)
        {
            var (ok, restored) = fixture.Restore();
            throw new FixtureException($"{e.Message}; {(ok ? "rolled back: " : "and the roll-back failed: ")}{restored}");
        }
        return fixture;
    }

    private string VerifyApplied(IEnumerable<IReadOnlyList<RegSection>> files)
    {
        int values = 0, deleted = 0;
        var n = 0;
        var state = RegFile.FinalState(files);
        foreach (var (key, (isDeleted, expect)) in state)
        {
            if (isDeleted)
            {
                if (Exists(_host, key)) throw new FixtureException($"applied, but {key} still exists although the fixture deletes it");
                deleted++;
                continue;
            }
            if (expect.Count == 0)
            {
                // A key with no values of its own: a key below it that is checked shows it exists; else ask.
                if (!state.Any(o => !o.Value.Deleted && o.Value.Values.Count > 0
                                    && o.Key.StartsWith(key + "\\", StringComparison.OrdinalIgnoreCase))
                    && !Exists(_host, key))
                    throw new FixtureException($"applied, but {key} does not exist");
                continue;
            }
            var file = Path.Combine(_stateDir, $"applied-{n++}.reg");
            Check(_host.Reg(["export", RegFile.Short(key), _host.FileArg(file), "/y"]), $"export {key} after the import");
            var have = RegFile.ValuesOf(RegFile.Parse(file), key);
            foreach (var line in expect.Values)
            {
                if (!have.Contains(line, StringComparer.Ordinal))
                    throw new FixtureException($"applied, but {key} holds {(have.FirstOrDefault(h => RegFile.ValueName(h) == RegFile.ValueName(line)) ?? "no such value")}, not {line}");
                values++;
            }
        }
        (ValuesReadBack, DeletedKeysAbsent) = (values, deleted);
        return $"{values} value(s) read back as written, {deleted} deleted key(s) absent";
    }

    /// <summary>Step 5. Never throws: the outcome and what was seen, for the cell (a failure is a containment error).</summary>
    public (bool Ok, string Detail) Restore()
    {
        var problems = new List<string>();
        long bytes = 0;
        int absent = 0, identical = 0;
        foreach (var p in _saved.AsEnumerable().Reverse())
        {
            try
            {
                if (Exists(_host, p.Key)) Check(_host.Reg(["delete", RegFile.Short(p.Key), "/f"]), $"delete {p.Key}");
                if (!p.Existed)
                {
                    if (Exists(_host, p.Key)) problems.Add($"{p.Key} still exists");
                    else if (p.ParentQuery is { } q && Query(_host, Parent(p.Key)!) != File.ReadAllText(q))
                        problems.Add($"{Parent(p.Key)} lists other values or subkeys than before the fixture");
                    else
                    {
                        absent++;
                        if (p.ParentQuery is { } q2) bytes += new FileInfo(q2).Length;
                    }
                    continue;
                }
                Check(_host.Reg(["import", _host.FileArg(p.Export!)]), $"import {p.Export}");
                var after = Path.ChangeExtension(p.Export!, ".after.reg");
                Check(_host.Reg(["export", RegFile.Short(p.Key), _host.FileArg(after), "/y"]), $"export {p.Key} after the restore");
                var (was, now) = (File.ReadAllBytes(p.Export!), File.ReadAllBytes(after));
                if (!was.AsSpan().SequenceEqual(now))
                    problems.Add($"{p.Key} differs from its export before the fixture ({was.Length} bytes before, {now.Length} after)");
                else
                {
                    identical++;
                    bytes += was.Length;
                }
            }
            catch (Exception e) when (e is FixtureException or IOException or System.ComponentModel.Win32Exception) { problems.Add(e.Message); }
        }
        (KeysAbsentAgain, ExportsIdentical) = (absent, identical);
        var summary = $"{absent} key(s) absent again and their parents' listings unchanged, {identical} export(s) "
                      + $"identical byte for byte ({bytes} bytes compared) in {_host.Describe}";
        if (problems.Count > 0) return (false, $"NOT restored: {string.Join("; ", problems)} ({summary})");
        Supervisor.Remove(LedgerEntry);
        return (true, "restored: " + summary);
    }

    /// <summary>A ledger's "reg STATE_DIR" whose harness died between apply and restore: restore from its saved exports.</summary>
    public static string RestoreFromLedger(string stateDir, IToolRunner tools)
    {
        var file = Path.Combine(stateDir, "fixture.json");
        if (!File.Exists(file)) return $"registry fixture {stateDir}: no fixture.json, nothing was applied";
        var state = JsonSerializer.Deserialize<LedgerState>(File.ReadAllText(file), JsonOptions)
                    ?? throw new InvalidDataException($"{file}: empty");
        var (host, gone) = RegistryHosts.FromSpec(state.Host, tools);
        if (host is null) return $"registry fixture {stateDir}: not restored: {gone}";
        var (ok, detail) = new RegistryFixture(host, stateDir, state.Saved.ToList()).Restore();
        return $"registry fixture {stateDir}: {detail}" + (ok ? "" : " (left in the ledger)");
    }

    private static string? Parent(string key) => key.LastIndexOf('\\') is var i and > 0 && key.IndexOf('\\') < i ? key[..i] : null;

    private static string Query(IRegistryHost host, string key)
    {
        var r = host.Reg(["query", RegFile.Short(key)]);
        Check(r, $"query {key}");
        return r.Stdout;
    }

    private static bool Exists(IRegistryHost host, string key) => host.Reg(["query", RegFile.Short(key)]).ExitCode == 0;

    private static void Check(ToolResult r, string what)
    {
        if (r.ExitCode != 0 || r.TimedOut) throw new FixtureException($"reg {r.Describe(what)}");
    }

    private sealed record LedgerState(Dictionary<string, string> Host, IReadOnlyList<SavePoint> Saved);

    private static readonly JsonSerializerOptions JsonOptions = new() { WriteIndented = true };
}

public sealed class FixtureException(string message) : Exception(message);
