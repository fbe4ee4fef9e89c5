using System.Diagnostics;
using System.Text.Json;
using Corpus.Harness.Containment;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Runner;

/// <summary>One cell (repro, case, variant) run on both subjects, every round, and what its family made of them.</summary>
/// <param name="Rounds">How many rounds each subject ran (a race may need several before its test decides).</param>
public sealed record ComparedCell(string Repro, string Case, string Variant, string Family, ComparePlan Plan,
                                  IReadOnlyList<CellResult> Base, IReadOnlyList<CellResult> New, CellComparison Comparison, double Seconds)
{
    public string Key => $"{Repro}:{Case}/{Variant}";
    public int Rounds => Base.Count;
}

/// <summary>A cell only one of the two subjects can run, and why the other cannot.</summary>
public sealed record OneSidedCell(string Repro, string Case, string Variant, string Subject, string Other, string Reason);

public sealed record CompareResult(string RunId, string Base, string New, IReadOnlyList<ComparedCell> Cells, IReadOnlyList<OneSidedCell> OneSided,
                                   IReadOnlyList<string> InputErrors, double Seconds)
{
    public int Count(CompareVerdict v) => Cells.Count(c => c.Comparison.Verdict == v);
}

/// <summary>
/// `corpus compare`: every selected cell both subjects can run, on both, through the same CellRunner and lanes as
/// `corpus run`; each family compares its own facts (ISignatureFamily.Compare), so nothing here knows a family.
/// </summary>
public static class Compare
{
    /// <summary>A cell's outcome as the comparison sees it: the family's facts, with the cell's final outcome (after evidence).</summary>
    public static Verdict VerdictOf(CellResult c) =>
        c.Verdict is { } v ? v with { Outcome = c.Outcome, Detail = c.Detail } : new Verdict(c.Outcome, c.Detail);

    /// <summary>
    /// Rounds on both subjects until the family's comparison is decided, or the plan's rounds or budget end. A side
    /// that is unsupported or broke stops the rounds: more runs cannot judge it. Undecided at the end: unchanged when
    /// the outcomes agree, else inconclusive, and the detail names the budget.
    /// </summary>
    public static async Task<(CellComparison Comparison, int Rounds)> DecideAsync(ISignatureFamily family, ComparePlan plan,
        Func<int, Task<(Verdict Base, Verdict New)>> round, Func<double> elapsedSec, Func<bool>? stop = null)
    {
        var (b, n) = (new List<Verdict>(), new List<Verdict>());
        CellComparison? c = null;
        while (true)
        {
            var (vb, vn) = await round(b.Count);
            b.Add(vb);
            n.Add(vn);
            var unjudged = new[] { vb, vn }.Any(v => v.Outcome is Outcome.Error or Outcome.Unsupported);
            var last = unjudged || stop?.Invoke() == true || b.Count >= plan.MaxRounds || elapsedSec() >= plan.BudgetSec;
            if (b.Count < plan.MinRounds && !last) continue;
            c = family.Compare(b, n);
            if (c.Decided || last) break;
        }
        if (!c.Decided)
            c = c with
            {
                Verdict = Comparisons.ByOutcome(b, n) is null ? CompareVerdict.Unchanged : CompareVerdict.Inconclusive,
                Detail = $"{c.Detail}; undecided when the budget ended ({plan.Budget})",
            };
        return (c, b.Count);
    }

    /// <summary>The cells of one subject's selection, keyed by (repro, case, variant).</summary>
    private static Dictionary<(string, string, string), PlannedCell> Side(Plan p) =>
        p.Cells.ToDictionary(c => (c.Entry.Manifest.Id, c.Case.Id, c.Variant));

    internal static async Task<int> RunAsync(string root, Args args, SignatureFamilies families, Subjects.SubjectKinds kinds, Capture.IToolRunner tools)
    {
        var baseName = args.Get("base") ?? throw new ArgumentException("compare needs --base SUBJECT (the build before the patch)");
        var newName = args.Get("new") ?? throw new ArgumentException("compare needs --new SUBJECT (the build after the patch)");
        if (baseName == newName) throw new InputException($"--base and --new are both '{baseName}': compare needs two different subjects");
        var rounds = args.Get("rounds") is { } r
            ? int.TryParse(r, out var k) && k is >= 1 and <= 100 ? k : throw new ArgumentException($"--rounds needs a count from 1 to 100, not '{r}'")
            : 3;
        var alongside = args.Get("alongside") is { } al
            ? int.TryParse(al, out var a) && a >= 0 ? a : throw new ArgumentException($"--alongside needs a count of 0 or more, not '{al}'")
            : Lanes.DefaultAlongside;
        var env = args.Env();
        var catalog = Catalog.Load(root, families, kinds);
        var subjects = new Dictionary<string, Subject>();
        Subject Resolve(string spec) => subjects.TryGetValue(spec, out var s) ? s : subjects[spec] = Program.ResolveSubject(spec, root, kinds);
        // Both subjects are resolved (a user's build probed) before anything runs, so a typo costs nothing.
        var (baseSubject, newSubject) = (Resolve(baseName), Resolve(newName));
        Plan Select(string option, string subject)
        {
            try
            {
                return Selection.Build(catalog, new Filter(args.List("repro"), args.List("case"), args.List("variant"), [subject],
                                                           args.List("exclude-tag")), Resolve, kinds);
            }
            // Selection speaks of --subject; here the subject came with --base or --new.
            catch (InputException e) when (e.Message.StartsWith("--subject: ", StringComparison.Ordinal))
            {
                throw new InputException($"{option}: {e.Message["--subject: ".Length..]}");
            }
        }
        var (basePlan, newPlan) = (Select("--base", baseName), Select("--new", newName));
        var (bySideBase, bySideNew) = (Side(basePlan), Side(newPlan));
        var both = basePlan.Cells.Where(c => bySideNew.ContainsKey((c.Entry.Manifest.Id, c.Case.Id, c.Variant)))
                                 .Select(c => (Base: c, New: bySideNew[(c.Entry.Manifest.Id, c.Case.Id, c.Variant)])).ToList();
        var oneSided = basePlan.Cells.Where(c => !bySideNew.ContainsKey((c.Entry.Manifest.Id, c.Case.Id, c.Variant)))
                           .Select(c => new OneSidedCell(c.Entry.Manifest.Id, c.Case.Id, c.Variant, baseName, newName, newSubject.Validate(c.Case, kinds)?.Reason ?? "not selected"))
            .Concat(newPlan.Cells.Where(c => !bySideBase.ContainsKey((c.Entry.Manifest.Id, c.Case.Id, c.Variant)))
                           .Select(c => new OneSidedCell(c.Entry.Manifest.Id, c.Case.Id, c.Variant, newName, baseName, baseSubject.Validate(c.Case, kinds)?.Reason ?? "not selected")))
            .ToList();
        if (both.Count == 0)
            throw new InputException($"{baseName} and {newName} can run none of the selected cells both: "
                                     + string.Join("; ", oneSided.Select(o => $"{o.Repro}:{o.Case} only on {o.Subject} ({o.Reason})").Distinct()));
        var errors = basePlan.Errors.Union(newPlan.Errors).ToList();
        var from = args.Get("from") is { } fromName ? Recorded.Open(root, fromName) : null;

        var ledgerDir = Path.Combine(root, ".cache", "ledger");
        if (Leftovers.Clean(ledgerDir, tools) is { Any: true } left) Console.Error.WriteLine($"corpus: {left}");
        Supervisor.UseLedger(ledgerDir);
        using var signals = Interrupt.Register();
        var artifacts = Path.Combine(root, "artifacts");
        var (runId, runDir) = Program.ClaimRunDir(artifacts, args.Get("run-id"));
        var runEntry = LedgerEntry.Format("run", runDir);
        Supervisor.Add(runEntry);
        var clock = Stopwatch.StartNew();
        void Progress(string msg) => Console.Error.WriteLine($"[{clock.Elapsed:mm\\:ss}] {msg}");
        var builder = new Builder(root, tools);
        // Round 1 in the run's folder as `corpus run` lays it out; later rounds in round<N>/ beside it.
        // Every cell keeps its artifacts until its comparison is known: a regression's evidence must not be pruned
        // because its outcome was the expected one for that subject.
        CellRunner Runner(int round, int? force) => new(new RunOptions(root, round == 0 ? runDir : Path.Combine(runDir, $"round{round + 1}"),
                                                                       true, Progress, force, Env: env), builder, tools, families, kinds);
        Console.WriteLine($"compare {baseName} (base) with {newName} (new): {both.Count} cells on both"
                          + (oneSided.Count > 0 ? $", {oneSided.Count} on one only" : ""));
        var compared = await Lanes.RunAsync(both, c => families.For(c.Base.Case.Signature).Lane, alongside, async (i, pair) =>
        {
            var (pb, pn) = pair;
            var (m, cs, v) = (pb.Entry.Manifest, pb.Case, pb.Variant);
            var family = families.For(cs.Signature);
            var plan = family.PlanComparison(cs, rounds);
            var cellClock = Stopwatch.StartNew();
            var (baseCells, newCells) = (new List<CellResult>(), new List<CellResult>());
            // The cells compare itself ran: only these are ever pruned (a --from run's cells are that run's).
            var ran = new List<CellResult>();
            // A finished run's cells stand for round 1 when this family compares such cells as they are.
            var (recorded, runsHere) = from?.Take(family, plan, pb, pn) ?? (null, null);
            Progress($"cell {i + 1}/{both.Count}: {m.Id}:{cs.Id} {v}, {baseName} against {newName} ({plan.Budget})"
                     + (from is null ? "" : recorded is null ? $"; run here: {runsHere}" : $"; round 1 from run {from.Run.RunId}"));
            var (comparison, _) = await DecideAsync(family, plan, async round =>
            {
                if (round == 0 && recorded is { } rec)
                {
                    baseCells.Add(rec.Base.Cell);
                    newCells.Add(rec.New.Cell);
                    Progress($"  round 1 (run {from!.Run.RunId}): {baseName} {rec.Base.Cell.Outcome.Name()} ({string.Join(", ", rec.Base.Cell.KeyFigures)}); "
                             + $"{newName} {rec.New.Cell.Outcome.Name()} ({string.Join(", ", rec.New.Cell.KeyFigures)})");
                    return (rec.Base.Verdict, rec.New.Verdict);
                }
                var runner = Runner(round, plan.ForceRuns);
                var cb = await runner.RunAsync(m, cs, v, pb.Subject, pb.Expected);
                baseCells.Add(cb);
                ran.Add(cb);
                var cn = Interrupt.IsRequested ? Interrupted(cb, pn.Subject.Name) : await runner.RunAsync(m, cs, v, pn.Subject, pn.Expected);
                newCells.Add(cn);
                ran.Add(cn);
                Progress($"  round {round + 1}: {baseName} {cb.Outcome.Name()} ({string.Join(", ", cb.KeyFigures)}); "
                         + $"{newName} {cn.Outcome.Name()} ({string.Join(", ", cn.KeyFigures)})");
                return (VerdictOf(cb), VerdictOf(cn));
            }, () => cellClock.Elapsed.TotalSeconds, () => Interrupt.IsRequested);
            if (Interrupt.IsRequested) comparison = new CellComparison(CompareVerdict.Inconclusive, "interrupted") { Figures = comparison.Figures };
            if (!args.Has("keep") && comparison.Verdict is CompareVerdict.Fixed or CompareVerdict.Unchanged)
                foreach (var cell in ran) Prune(cell, root);
            var done = new ComparedCell(m.Id, cs.Id, v, family.Key, plan, baseCells, newCells, comparison, Math.Round(cellClock.Elapsed.TotalSeconds, 1));
            Progress($"cell {i + 1}/{both.Count}: {comparison.Verdict.ToString().ToLowerInvariant()}: {comparison.Detail}");
            return done;
        }, () => Interrupt.IsRequested);
        var result = new CompareResult(runId, baseName, newName, compared, oneSided, errors, clock.Elapsed.TotalSeconds);
        Report.SummaryWriter.Write(Path.Combine(runDir, "summary.json"), runId, [.. compared.SelectMany(c => c.Base.Concat(c.New))], errors,
                                   result.Seconds, root);
        Supervisor.Remove(runEntry);
        Report.CompareReport.Write(runDir, result, root, tools);
        Report.RunOutputs.LinkLatest(artifacts, runId);
        Console.WriteLine(Report.CompareReport.Table(result));
        foreach (var e in errors) Console.WriteLine($"INPUT ERROR {e}");
        Console.WriteLine();
        Console.WriteLine(Report.CompareReport.Totals(result) + $" Report: {Path.GetRelativePath(root, Path.Combine(runDir, Report.CompareReport.MarkdownName))}");
        if (Interrupt.IsRequested)
        {
            Supervisor.WaitIdle(TimeSpan.FromSeconds(5));
            Console.Error.WriteLine($"corpus: interrupted by {Interrupt.SignalName}: {Interrupt.Cleaned}");
            return 128 + Interrupt.Signal;
        }
        return ExitCode(result);
    }

    /// <summary>
    /// `compare --from RUN`: a finished run (the gate's, say) whose cells on both subjects are taken as round 1 instead
    /// of running them again. Only from the same manifests and expected/, and only for a family that compares cells as
    /// `corpus run` leaves them (no forced runs) and reads its facts back (<see cref="ISignatureFamily.ReadFacts"/>).
    /// </summary>
    private sealed class Recorded
    {
        public required Report.RunRecord Run { get; init; }
        private readonly Dictionary<CellKey, JsonElement> _cells = [];
        private string _root = "";

        public static Recorded Open(string root, string name)
        {
            var run = Report.RunRecord.Load(root, name);
            var here = Report.Checkout.Of(root);
            foreach (var (field, mine) in new[] { ("expected", here.Expected), ("manifests", here.Manifests) })
            {
                var theirs = run.CheckoutField(field);
                if (theirs != mine)
                    throw new InputException(run.File, $"checkout.{field}",
                        $"run {run.RunId} was judged against other {(field == "expected" ? "expected/ files" : "manifests")} than this checkout's "
                        + $"({theirs ?? "none recorded"}, here {mine}): its cells cannot stand for this checkout's; run compare without --from");
            }
            var r = new Recorded { Run = run, _root = root };
            foreach (var c in run.Cells)
            {
                string? S(string n) => c.TryGetProperty(n, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;
                if (S("repro") is { } repro && S("case") is { } cs && S("variant") is { } variant && S("subject") is { } subject)
                    r._cells[new CellKey(repro, cs, variant, subject)] = c;
            }
            return r;
        }

        private CellKey Key(PlannedCell p) => new(p.Entry.Manifest.Id, p.Case.Id, p.Variant, p.Subject.Name);

        /// <summary>Both sides' cells from the run, with their verdicts typed again; or why this pair runs here instead.</summary>
        public (((CellResult Cell, Verdict Verdict) Base, (CellResult Cell, Verdict Verdict) New)? Pair, string? RunsHere) Take(
            ISignatureFamily family, ComparePlan plan, PlannedCell b, PlannedCell n)
        {
            if (plan.ForceRuns is { } k) return (null, $"the {family.Key} family compares rounds of {k} forced runs, which a run does not make");
            var missing = new[] { b, n }.Where(p => !_cells.ContainsKey(Key(p))).Select(p => p.Subject.Name).ToList();
            if (missing.Count > 0) return (null, $"run {Run.RunId} has no such cell on {string.Join(" or ", missing)}");
            (CellResult Cell, Verdict Verdict)? Read(PlannedCell p)
            {
                // Where the run is: under artifacts/, or a folder given by its path.
                var cell = Run.Cell(_cells[Key(p)], _root, Path.GetRelativePath(_root, Run.Dir).Replace('\\', '/') + "/");
                var v = VerdictOf(cell);
                if (v.Facts is not JsonElement json) return null;
                object? facts;
                try { facts = family.ReadFacts(json); }
                catch (JsonException e)
                {
                    throw new InputException(Path.Combine(cell.RecordDir!, Report.FactsWriter.FileName), "family.facts",
                                             $"not the {family.Key} family's facts as this harness writes them ({e.Message})");
                }
                return facts is null ? null : (cell, v with { Facts = facts });
            }
            return (Read(b), Read(n)) is ({ } rb, { } rn)
                ? ((rb, rn), null)
                : (null, $"the {family.Key} family does not read its facts back from a run's records");
        }
    }

    /// <summary>2 on input errors, 1 when any cell regressed, 0 otherwise.</summary>
    public static int ExitCode(CompareResult r) =>
        r.InputErrors.Count > 0 ? RunExit.InputError : r.Count(CompareVerdict.Regressed) > 0 ? RunExit.Differs : RunExit.Ok;

    /// <summary>As `corpus run` prunes a cell that matched expected/: its runs and captures go, its records stay and say so.</summary>
    private static void Prune(CellResult cell, string root)
    {
        if (cell.ArtifactDir is not { } dir || !Directory.Exists(dir)) return;
        foreach (var sub in Directory.GetDirectories(dir)) Directory.Delete(sub, recursive: true);
        foreach (var file in Directory.GetFiles(dir).Where(f => !CellRunner.Records.Contains(Path.GetFileName(f)))) File.Delete(file);
        cell.ArtifactDir = null;
        Report.FactsWriter.Write(cell, root, dir);
    }

    /// <summary>The new side of a round that an interrupt stopped before it started.</summary>
    private static CellResult Interrupted(CellResult other, string subject) => new()
    {
        Key = other.Key with { Subject = subject }, Outcome = Outcome.Error, Detail = "interrupted", Rerun = other.Rerun,
    };
}
