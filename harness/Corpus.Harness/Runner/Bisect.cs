using Corpus.Harness.Json;
using System.Diagnostics;
using System.Text.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Report;

namespace Corpus.Harness.Runner;

/// <param name="Index">Position in the ordered subject list.</param>
public sealed record BisectProbe(int Index, string Subject, Outcome Outcome, string Detail, double Seconds);

/// <param name="Before">The last subject with the first subject's outcome (for a fix: the last bad one).</param>
/// <param name="After">The first subject with the last subject's outcome (for a fix: the first good one).</param>
public sealed record BisectResult(string? Before, string? After, Outcome? BeforeOutcome, Outcome? AfterOutcome,
                                  IReadOnlyList<BisectProbe> Probes, IReadOnlyList<string> Skipped, string Verdict)
{
    public bool Found => Before is not null && After is not null && Skipped.Count == 0;
}

/// <summary>
/// Which subject in an ordered list changed a cell's outcome: the two ends are probed, then the middle of the range
/// that still holds the change, as git bisect does. A probe that is neither reproduced nor clean (unsupported,
/// error, wrong-failure) is skipped, and its neighbours are tried instead; if the change lies beside skipped
/// subjects, the verdict names the range. Generic: the probe is any function from subject to outcome.
/// </summary>
public static class Bisect
{
    /// <param name="say">Told of each step that is not a probe: the check of the ends, a subject skipped.</param>
    public static async Task<BisectResult> RunAsync(IReadOnlyList<string> subjects,
                                                    Func<string, Task<(Outcome Outcome, string Detail)>> probe,
                                                    Action<BisectProbe>? report = null, Action<string>? say = null)
    {
        if (subjects.Count < 2) throw new ArgumentException("bisect needs at least two subjects, oldest first");
        if (subjects.Distinct().Count() != subjects.Count) throw new ArgumentException("bisect: a subject is listed twice");
        var probes = new List<BisectProbe>();
        async Task<Outcome> Probe(int i)
        {
            var clock = Stopwatch.StartNew();
            var (outcome, detail) = await probe(subjects[i]);
            var p = new BisectProbe(i, subjects[i], outcome, detail, Math.Round(clock.Elapsed.TotalSeconds, 1));
            probes.Add(p);
            report?.Invoke(p);
            return outcome;
        }
        static bool Decisive(Outcome o) => o is Outcome.Reproduced or Outcome.Clean;
        // As mozregression does: both ends first, and they must really differ. An end that cannot be judged (not
        // provisioned, not built, a failure of another kind) is skipped, and its neighbour becomes the end.
        var passed = new List<string>();
        int lo = 0, hi = subjects.Count - 1;
        var first = await Probe(lo);
        while (!Decisive(first) && lo + 1 < hi)
        {
            say?.Invoke($"skipped {subjects[lo]} ({first.Name()}): it cannot be judged; trying its neighbour {subjects[lo + 1]}");
            passed.Add(subjects[lo]);
            first = await Probe(++lo);
        }
        var end = await Probe(hi);
        while (!Decisive(end) && hi - 1 > lo)
        {
            say?.Invoke($"skipped {subjects[hi]} ({end.Name()}): it cannot be judged; trying its neighbour {subjects[hi - 1]}");
            passed.Add(subjects[hi]);
            end = await Probe(--hi);
        }
        var skippedNote = passed.Count == 0 ? "" : $" ({string.Join(", ", passed)} skipped: could not be judged)";
        if (!Decisive(first) || !Decisive(end))
            return new(null, null, null, null, probes, [],
                       $"inconclusive: the ends must be reproduced or clean, got {subjects[lo]} {first.Name()} and {subjects[hi]} {end.Name()}{skippedNote}");
        if (first == end)
            return new(null, null, first, end, probes, [],
                       $"no change: the ends {subjects[lo]} and {subjects[hi]} are both {first.Name()}, so there is nothing to bisect "
                       + $"(one end must be reproduced and the other clean){skippedNote}");
        say?.Invoke($"ends checked: {subjects[lo]} {first.Name()}, {subjects[hi]} {end.Name()}: they differ");
        // Invariant: subjects[lo] has the first outcome, subjects[hi] the end's.
        var skipped = new SortedSet<int>();
        while (hi - lo > 1)
        {
            // The untested subject nearest the middle; skipped ones are passed over.
            var mid = (lo + hi) / 2;
            var candidates = Enumerable.Range(lo + 1, hi - lo - 1).Where(i => !skipped.Contains(i))
                .OrderBy(i => Math.Abs(i - mid)).ThenBy(i => i).ToList();
            if (candidates.Count == 0) break;
            var at = candidates[0];
            var o = await Probe(at);
            if (o == first) lo = at;
            else if (o == end) hi = at;
            else
            {
                say?.Invoke($"skipped {subjects[at]} ({o.Name()}): it cannot be judged; trying a neighbour");
                skipped.Add(at);
            }
        }
        var between = skipped.Where(i => i > lo && i < hi).Select(i => subjects[i]).ToList();
        var verdict = between.Count == 0
            ? $"last {first.Name()}: {subjects[lo]}; first {end.Name()}: {subjects[hi]}{skippedNote}"
            : $"the change lies between {subjects[lo]} ({first.Name()}) and {subjects[hi]} ({end.Name()}); "
              + $"{string.Join(", ", between)} could not be judged{skippedNote}";
        return new(subjects[lo], subjects[hi], first, end, probes, between, verdict);
    }

    public static void Write(string file, BisectResult r, string cell, double seconds) =>
        File.WriteAllText(file, JsonSerializer.Serialize(new
        {
            cell, verdict = r.Verdict, before = r.Before, after = r.After, found = r.Found, seconds = Math.Round(seconds, 1),
            probes = r.Probes.Select(p => new { p.Index, p.Subject, outcome = p.Outcome.Name(), p.Detail, p.Seconds }),
        }, new JsonSerializerOptions { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase }));
}

/// <summary>`corpus bisect`: one cell probed over an ordered list of subjects (make bisect).</summary>
internal static class BisectCommand
{
    public static async Task<int> RunAsync(string root, Args args, Signatures.SignatureFamilies families, Subjects.SubjectKinds kinds,
                                          Capture.IToolRunner tools)
    {
        var names = args.List("subjects");
        string? repro = args.Get("repro"), caseId = args.Get("case"), variantId = args.Get("variant");
        if (args.Get("from") is { } from)
        {
            // Start from a matrix: the ends are the two subjects either side of its change.
            var file = Path.Combine(root, "artifacts", from, MatrixTable.JsonFile);
            if (!File.Exists(file))
                throw new InputException($"--from {from}: {Path.GetRelativePath(root, file)} does not exist (corpus matrix writes it)");
            try
            {
                var (boundary, range) = MatrixBisect.Plan(MatrixTable.Read(file), repro, caseId, variantId, names);
                (repro, caseId, variantId, names) = (boundary.Row.Repro, boundary.Row.Case, boundary.Row.Variant, range);
                Console.WriteLine($"from matrix {from}: {boundary.Row.Label} is {boundary.BeforeOutcome.Name()} on {boundary.Before} "
                                  + $"and {boundary.AfterOutcome.Name()} on {boundary.After}");
            }
            catch (NoChangeException e)
            {
                Console.WriteLine(e.Message);
                return RunExit.Differs;
            }
        }
        else if (SubjectOrder.ByVersion(names) is { } ordered && !ordered.SequenceEqual(names))
        {
            // Versions of one kind are bisected oldest first, whatever order they came in (8.0.9 before 8.0.10).
            Console.WriteLine($"ordered by version: {string.Join(", ", ordered)}");
            names = ordered;
        }
        if (repro is null) throw new ArgumentException("bisect needs --repro ID (or --from RUN, a matrix's run)");
        if (names.Count < 2) throw new ArgumentException("bisect needs --subjects S1,S2,… (at least two, oldest first) or --from RUN");
        var catalog = Catalog.Load(root, families, kinds);
        var entry = catalog.Entries.FirstOrDefault(e => e.Manifest.Id == repro)
                    ?? throw new InputException(catalog.InputErrors.FirstOrDefault(e => e.Repro == repro)?.Message
                                                     ?? $"no repro '{repro}' (repros: {string.Join(", ", catalog.Entries.Select(e => e.Manifest.Id))})");
        var m = entry.Manifest;
        var cs = caseId is { } c
            ? m.Cases.FirstOrDefault(x => x.Id == c) ?? throw new InputException($"no case '{c}' in {m.Id} (cases: {string.Join(", ", m.Cases.Select(x => x.Id))})")
            : m.Cases.Count == 1 ? m.Cases[0] : throw new InputException($"{m.Id} has several cases: give --case ({string.Join(", ", m.Cases.Select(x => x.Id))})");
        var variant = variantId ?? (m.Variants.Count == 1 ? m.Variants[0]
            : throw new InputException($"{m.Id} has several variants: give --variant ({string.Join(", ", m.Variants)})"));
        if (!m.Variants.Contains(variant)) throw new InputException($"no variant '{variant}' in {m.Id} (variants: {string.Join(", ", m.Variants)})");
        var subjects = names.Select(n =>
        {
            try { return Program.ResolveSubject(n, root, kinds); }
            // A version that cannot be provisioned is a probe to skip, as mozregression skips a broken build; a path
            // that is not a build stays bad input.
            catch (InputException e) when (SubjectOrder.Parse(n) is { } v
                                            && kinds.ForPrefix(v.Kind) is { } kind)
            {
                Console.WriteLine($"  {e.Message}: it will be skipped");
                return new Subject(n, kind, n, null, e.Message);
            }
        }).ToList();
        foreach (var s in subjects)
            if (s.Validate(cs, kinds) is { } unrunnable) throw new InputException($"{s.Name} cannot run case {cs.Id}: {unrunnable.Reason}");

        var ledgerDir = Path.Combine(root, ".cache", "ledger");
        if (Containment.Leftovers.Clean(ledgerDir, tools) is { Any: true } left) Console.Error.WriteLine($"corpus: {left}");
        Containment.Supervisor.UseLedger(ledgerDir);
        using var signals = Containment.Interrupt.Register();
        var (runId, runDir) = Program.ClaimRunDir(Path.Combine(root, "artifacts"), args.Get("run-id"));
        var clock = Stopwatch.StartNew();
        void Progress(string msg) => Console.Error.WriteLine($"[{clock.Elapsed:mm\\:ss}] {msg}");
        var runner = new CellRunner(new RunOptions(root, runDir, args.Has("keep"), Progress, Env: args.Env()), new Builder(root, tools), tools, families, kinds);
        var cell = $"{m.Id}:{cs.Id}/{variant}";
        Console.WriteLine($"bisect {cell} over {string.Join(", ", names)}");
        var result = await Bisect.RunAsync(names, async name =>
        {
            if (Containment.Interrupt.IsRequested) throw new OperationCanceledException("interrupted");
            var subject = subjects[names.ToList().IndexOf(name)];
            var expected = entry.Expected.FirstOrDefault(e => e.Key == new CellKey(m.Id, cs.Id, variant, subject.Name));
            var r = await runner.RunAsync(m, cs, variant, subject, expected);
            return (r.Outcome, r.Detail);
        }, p => Console.WriteLine($"  probe {p.Subject,-16} {p.Outcome.Name(),-13} {p.Seconds,6:0.0} s  {p.Detail}"),
           note => Console.WriteLine($"  {note}"));
        Bisect.Write(Path.Combine(runDir, "bisect.json"), result, cell, clock.Elapsed.TotalSeconds);
        var latest = Path.Combine(root, "artifacts", "latest");
        if (File.Exists(latest) || Directory.Exists(latest)) File.Delete(latest);
        File.CreateSymbolicLink(latest, runId);
        Console.WriteLine($"{result.Verdict} ({result.Probes.Count} probes of {names.Count} subjects, {clock.Elapsed.TotalSeconds:0} s; "
                          + $"{Path.GetRelativePath(root, Path.Combine(runDir, "bisect.json"))})");
        return result.Found ? RunExit.Ok : RunExit.Differs;
    }
}
