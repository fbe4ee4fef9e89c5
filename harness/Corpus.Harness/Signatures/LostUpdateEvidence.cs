using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <param name="Found">The value the exchange found (what other threads had made of the counter).</param>
/// <param name="Wrote">The value it wrote back: the one its thread had read before.</param>
public sealed record LostUpdate(string Object, int Thread, long Found, long Wrote, bool BeforeDelete)
{
    public bool LostIncrement => Found > Wrote;
}

/// <summary>
/// What the event ring of a crash core (harness/native/eventring, read by eventring.py) says about lost updates:
/// each exchange that wrote back a value its thread had read over a different one, and the deletes of the object.
/// </summary>
public sealed partial record EventRingFacts(bool RingFound, int? CrashThread, IReadOnlyList<LostUpdate> Lost,
                                            IReadOnlyList<(string Object, int Thread)> Deletes, string Text)
{
    /// <summary>gdb on the core alone: the script finds the ring by its magic, so no symbols are needed.</summary>
    public static EventRingFacts Run(IToolRunner tools, string core, string script)
    {
        var r = tools.Run("gdb", ["-q", "-batch", "-nx", "-x", script, "-c", core], TimeSpan.FromMinutes(2));
        if (r.TimedOut) throw new InvalidOperationException(r.Describe("gdb"));
        return Parse(r.Stdout);
    }

    /// <summary>A ring file the program's crash handler wrote: the same script, without gdb.</summary>
    public static EventRingFacts RunFile(IToolRunner tools, string ring, string script)
    {
        var r = tools.Run("python3", [script, ring], TimeSpan.FromMinutes(2));
        if (r.TimedOut || r.ExitCode != 0) throw new InvalidOperationException(r.Describe("eventring.py"));
        return Parse(r.Stdout);
    }

    public static EventRingFacts Parse(string text)
    {
        var lost = new List<LostUpdate>();
        var deletes = new List<(string, int)>();
        int? crash = null;
        var found = false;
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.TrimEnd();
            if (line.StartsWith("eventring at ")) found = true;
            else if (Crash().Match(line) is { Success: true } c) crash = int.Parse(c.Groups[1].Value);
            else if (LostLine().Match(line) is { Success: true } l)
                lost.Add(new LostUpdate(l.Groups[1].Value, int.Parse(l.Groups[2].Value), long.Parse(l.Groups[4].Value),
                                        long.Parse(l.Groups[5].Value), l.Groups[6].Success));
            else if (Delete().Match(line) is { Success: true } d) deletes.Add((d.Groups[1].Value, int.Parse(d.Groups[2].Value)));
        }
        return new EventRingFacts(found, crash, lost, deletes, text);
    }

    /// <summary>Null when the ring proves the lost update the spec asks for, otherwise what is missing.</summary>
    public string? Mismatch(LostUpdateSpec spec)
    {
        if (!RingFound) return "the core or ring file holds no event ring (was the program built with eventring and recording?)";
        var wanted = Lost.Where(spec.Matches).ToList();
        if (wanted.Count == 0)
            return Lost.Count == 0
                ? "the event ring shows no lost update"
                : $"the event ring shows {Lost.Count} lost update(s), none of them a lost {spec.Lost}";
        if (spec.BeforeDelete && !wanted.Any(l => l.BeforeDelete))
            return Deletes.Count == 0
                ? "the event ring shows no delete of the object"
                : $"no lost {spec.Lost} precedes the first delete of the object in the event ring";
        return null;
    }

    [GeneratedRegex(@"^crashing thread LWP (\d+)")]
    private static partial Regex Crash();

    [GeneratedRegex(@"^lost update #\d+: obj (0x[0-9a-f]+) LWP (\d+) exchange read (-?\d+), found (-?\d+), wrote (-?\d+): .*?( \(before the first delete\))?$")]
    private static partial Regex LostLine();

    [GeneratedRegex(@"^delete: obj (0x[0-9a-f]+) LWP (\d+)")]
    private static partial Regex Delete();
}

/// <summary>
/// Lost-update facts from the crash core's event ring (harness/native/eventring): an exchange that wrote back a
/// value its thread had read over a different one. Lost: increment, decrement or any; BeforeDelete: the lost
/// update precedes the object's first delete in the ring. Script: eventring.py, found from the manifest's place.
/// </summary>
public sealed record LostUpdateSpec(string Lost, bool BeforeDelete, string Script)
{
    public static LostUpdateSpec Read(Fields f)
    {
        f.AllowOnly("lost", "beforeDelete");
        var lost = f.Enum("lost", new Dictionary<string, string> { ["increment"] = "increment", ["decrement"] = "decrement", ["any"] = "any" },
                          "increment", required: false);
        // repros/<id>/repro.json: the corpus root is two folders up.
        var script = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(Path.GetFullPath(f.File))!, "..", "..",
                                                   "harness", "native", "eventring", "eventring.py"));
        if (!File.Exists(script)) throw f.Error($"needs {script}, the event ring reader, which is missing");
        return new LostUpdateSpec(lost, f.BoolOr("beforeDelete", true), script);
    }

    public bool Matches(LostUpdate l) => Lost switch
    {
        "increment" => l.Found > l.Wrote,
        "decrement" => l.Found < l.Wrote,
        _ => l.Found != l.Wrote,
    };
}

/// <param name="InRing">Lost updates of the asked kind in the ring.</param>
public sealed record LostUpdateFacts(string Object, int Thread, long Found, long Wrote, bool BeforeDelete, int InRing, string Ring);

/// <summary>The lostUpdate evidence check: a crash is this bug only if the core's event ring shows the overwritten update.</summary>
public sealed class LostUpdateEvidence : IEvidenceCheck
{
    public string Key => "lostUpdate";
    public object ReadSpec(Fields f) => LostUpdateSpec.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (cs.Crash is not ({ Core: true } or { RingFile: not null }))
            throw c.Error("a lostUpdate signature needs the crash capture with its core or its ringFile", "signature.lostUpdate");
    }

    public Task<EvidenceResult> CheckAsync(EvidenceContext x) => Task.Run(() => Check(x.Case.Signature.Get<LostUpdateSpec>(Key)!, x.Cell, x.HitRun, x.Tools));

    internal static EvidenceResult Check(LostUpdateSpec spec, CellResult cell, string? label, IToolRunner tools)
    {
        const string key = "lostUpdate";
        var why = Read(spec, cell, label, tools, out var facts, out var ring);
        // Without a ring read the cell says nothing about the bug: an error; a ring read without the update is another failure.
        if (why is not null) return facts is null ? EvidenceResult.Broken(key, $"no event ring read: {why}") : EvidenceResult.Fail(key, $"no lost update proven: {why}");
        var first = facts!.Lost.First(l => spec.Matches(l) && (!spec.BeforeDelete || l.BeforeDelete));
        var all = facts.Lost.Count(spec.Matches);
        var figure = $"LWP {first.Thread} wrote {first.Wrote} over {first.Found} on {first.Object}";
        return EvidenceResult.Hold(key,
            $"the event ring shows LWP {first.Thread}'s exchange writing back {first.Wrote} over {first.Found}: "
            + $"{Math.Abs(first.Found - first.Wrote)} {(first.LostIncrement ? "increment" : "decrement")} overwritten"
            + (first.BeforeDelete ? " before the object's first delete" : "")
            + (all > 1 ? $" ({all} such in the ring)" : ""),
            new LostUpdateFacts(first.Object, first.Thread, first.Found, first.Wrote, first.BeforeDelete, all, ring!), $"lost update: {figure}");
    }

    private static string? Read(LostUpdateSpec spec, CellResult cell, string? label, IToolRunner tools, out EventRingFacts? facts, out string? ring)
    {
        facts = null;
        ring = null;
        CaptureRecord? core;
        // A race names its hit run; a one-run family has one run and at most one core.
        // A ring file (written by the program where no core is) is read like a core.
        core = cell.CapturesNow().LastOrDefault(c => c.Backend is "core" or "ring" && (label is null || c.Run == label));
        label ??= core?.Run ?? "the run";
        if (core is null || !File.Exists(core.File))
        {
            var errors = cell.CaptureErrorsNow();
            return $"no core or ring file of {label} to read the event ring from ({(errors.Count == 0 ? "no capture error recorded" : string.Join("; ", errors))})";
        }
        try
        {
            facts = core.Backend == "ring"
                ? EventRingFacts.RunFile(tools, core.File, spec.Script)
                : EventRingFacts.Run(tools, core.File, spec.Script);
            ring = Path.Combine(Path.GetDirectoryName(core.File)!, "eventring.txt");
            File.WriteAllText(ring, facts.Text);
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or System.ComponentModel.Win32Exception)
        {
            return $"reading the event ring of {label} failed: {e.Message}";
        }
        return facts.Mismatch(spec);
    }
}
