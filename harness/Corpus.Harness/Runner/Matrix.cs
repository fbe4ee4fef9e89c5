using System.Text.RegularExpressions;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Report;

namespace Corpus.Harness.Runner;

/// <summary>
/// `corpus matrix`: the selection runs on every subject in one `corpus run` (same lanes, containment, summary and
/// report); this adds the cells × subjects table on the console and as matrix.md, matrix.json and matrix.png.
/// </summary>
internal static class MatrixCommand
{
    /// <param name="given">The --subjects, in the order given; empty: every selected case's own subjects.</param>
    /// <param name="code">What `run` would exit with.</param>
    /// <param name="kinds">The run's subject kinds, for why a subject cannot run a case.</param>
    public static int Finish(string root, IReadOnlyList<string> given, string runId, string runDir,
                             IReadOnlyList<PlannedCell> plan, IReadOnlyList<CellResult> cells, int code, Subjects.SubjectKinds kinds)
    {
        var names = given.Count > 0 ? given : plan.Select(c => c.Subject.Name).Distinct().ToList();
        var subjects = names.Select(n => new MatrixSubject(n, plan.FirstOrDefault(c => c.Subject.Name == n)?.Subject.Version)).ToList();
        var table = MatrixTable.From(runId, subjects, cells, (key, name) =>
        {
            var cs = plan.First(c => c.Entry.Manifest.Id == key.Repro && c.Case.Id == key.Case).Case;
            var subject = plan.FirstOrDefault(c => c.Subject.Name == name)?.Subject;
            if (subject is null) return "this subject could not be used here (see the input errors)";
            return subject.Validate(cs, kinds)?.Reason ?? (given.Count == 0 ? "not one of the case's subjects" : "not run");
        });
        table.Write(runDir, w => Console.Error.WriteLine($"corpus: {w}"));
        Console.WriteLine();
        Console.WriteLine(table.Render());
        Console.WriteLine($"Matrix: {Path.GetRelativePath(root, Path.Combine(runDir, MatrixTable.MarkdownFile))}, "
                          + $"{MatrixTable.JsonFile}, {MatrixTable.PictureFile}");
        return Code(cells, code);
    }

    /// <summary>
    /// A matrix shows outcomes rather than gating user subjects: bad input is 2; 1 when a cell differs from expected/
    /// or ended `error` (the harness or a build broke: a hole in the table); an unsupported cell is a finding.
    /// </summary>
    public static int Code(IReadOnlyList<CellResult> cells, int runCode) =>
        runCode == RunExit.InputError ? RunExit.InputError
        : cells.Any(c => c.Gate.Fails() || c.Outcome == Outcome.Error)
            ? RunExit.Differs : RunExit.Ok;
}

/// <summary>
/// The order of subjects that name versions of one kind (roslyn:4.8.0, net:8.0.10, wine-net:9.0.19): numeric per
/// part, so 8.0.10 comes after 8.0.9, and a prerelease before its release.
/// </summary>
public static partial class SubjectOrder
{
    [GeneratedRegex(@"^(?<kind>[A-Za-z][A-Za-z0-9-]*):(?<v>\d+(\.\d+)*)(-(?<pre>[0-9A-Za-z.-]+))?$")]
    private static partial Regex Versioned();

    /// <summary>The kind prefix and version parts of a KIND:VERSION name; null for anything else (a path, a built-in name).</summary>
    public static (string Kind, int[] Parts, string? Pre)? Parse(string name)
    {
        var m = Versioned().Match(name);
        if (!m.Success) return null;
        var parts = m.Groups["v"].Value.Split('.').Select(p => int.TryParse(p, out var n) ? n : -1).ToArray();
        return parts.Contains(-1) ? null : (m.Groups["kind"].Value, parts, m.Groups["pre"].Success ? m.Groups["pre"].Value : null);
    }

    public static int Compare((string Kind, int[] Parts, string? Pre) a, (string Kind, int[] Parts, string? Pre) b)
    {
        for (var i = 0; i < Math.Max(a.Parts.Length, b.Parts.Length); i++)
        {
            var d = a.Parts.ElementAtOrDefault(i).CompareTo(b.Parts.ElementAtOrDefault(i));
            if (d != 0) return d;
        }
        if (a.Pre == b.Pre) return 0;
        if (a.Pre is null) return 1;
        if (b.Pre is null) return -1;
        return string.CompareOrdinal(a.Pre, b.Pre);
    }

    /// <summary>The names oldest first when all are versions of one kind; null when they are not (then the given order stands).</summary>
    public static IReadOnlyList<string>? ByVersion(IReadOnlyList<string> names)
    {
        var parsed = names.Select(n => (Name: n, V: Parse(n))).ToList();
        if (parsed.Any(p => p.V is null) || parsed.Select(p => p.V!.Value.Kind).Distinct().Count() != 1) return null;
        var sorted = parsed.ToList();
        sorted.Sort((a, b) => Compare(a.V!.Value, b.V!.Value));
        return sorted.Select(p => p.Name).ToList();
    }
}

/// <summary>Where a matrix's outcome changes along its subjects: the start of `corpus bisect --from RUN`.</summary>
public sealed record MatrixBoundary(MatrixRow Row, string Before, Outcome BeforeOutcome, string After, Outcome AfterOutcome,
                                    IReadOnlyList<string> Between);

public static class MatrixBisect
{
    private static bool Decisive(Outcome? o) => o is Outcome.Reproduced or Outcome.Clean;

    /// <summary>
    /// Every change of a row along the matrix's subjects: the last subject with one decisive outcome and the first with
    /// the other; squares between them that could not be judged are listed.
    /// </summary>
    public static IReadOnlyList<MatrixBoundary> Boundaries(MatrixRow row)
    {
        var found = new List<MatrixBoundary>();
        int? last = null;
        for (var i = 0; i < row.Squares.Count; i++)
        {
            if (!Decisive(row.Squares[i].Outcome)) continue;
            if (last is { } l && row.Squares[i].Outcome != row.Squares[l].Outcome)
                found.Add(new(row, row.Squares[l].Subject, row.Squares[l].Outcome!.Value, row.Squares[i].Subject, row.Squares[i].Outcome!.Value,
                              row.Squares.Skip(l + 1).Take(i - l - 1).Select(q => q.Subject).ToList()));
            last = i;
        }
        return found;
    }

    /// <summary>Whether a change lies inside a --subjects list: both its ends are in it, or within its versions.</summary>
    private static bool Within(MatrixBoundary b, IReadOnlyList<string> finer)
    {
        if (finer.Contains(b.Before) && finer.Contains(b.After)) return true;
        var sorted = SubjectOrder.ByVersion([.. finer.Union([b.Before, b.After])]);
        if (sorted is null || SubjectOrder.ByVersion(finer) is not { } own) return false;
        int Pos(string s) => sorted.ToList().IndexOf(s);
        bool Inside(string s) => Pos(s) >= Pos(own[0]) && Pos(s) <= Pos(own[^1]);
        return Inside(b.Before) && Inside(b.After);
    }

    /// <summary>
    /// The row of the matrix to bisect and the subjects from one side of its change to the other: the matrix's own
    /// columns, or the finer --subjects list cut to the range between the two ends.
    /// </summary>
    public static (MatrixBoundary Boundary, IReadOnlyList<string> Subjects) Plan(MatrixTable m, string? repro, string? cs, string? variant,
                                                                                 IReadOnlyList<string> finer)
    {
        var rows = m.Rows.Where(r => (repro is null || r.Repro == repro) && (cs is null || r.Case == cs) && (variant is null || r.Variant == variant)).ToList();
        if (rows.Count == 0)
            throw new InputException($"matrix run {m.RunId} has no cell {repro ?? "*"}:{cs ?? "*"}/{variant ?? "*"} "
                                     + $"(cells: {string.Join(", ", m.Rows.Select(r => $"{r.Repro}:{r.Case}/{r.Variant}"))})");
        var all = rows.SelectMany(Boundaries).ToList();
        // A row that changes more than once (a bug that came and went): --subjects picks the change it spans.
        var changes = finer.Count > 0 && all.Count > 1 ? all.Where(b => Within(b, finer)).ToList() : all;
        if (all.Count == 0)
            throw new NoChangeException($"no change in matrix run {m.RunId}: "
                + string.Join("; ", rows.Select(r => $"{r.Repro}:{r.Case}/{r.Variant} is "
                    + string.Join(", ", r.Squares.Select(q => q.OutcomeText).Distinct()) + " on every subject that could be judged"))
                + "; nothing to bisect");
        if (changes.Count != 1)
            throw new InputException($"matrix run {m.RunId} changes outcome {all.Count} times"
                                     + (finer.Count > 0 ? $", {changes.Count} of them within --subjects" : "")
                                     + ": " + string.Join(", ", all.Select(b => $"{b.Row.Repro}:{b.Row.Case}/{b.Row.Variant} {b.Before} ({b.BeforeOutcome.Name()}) → {b.After} ({b.AfterOutcome.Name()})"))
                                     + "; choose one with --repro, --case and --variant, or with --subjects that span only it");
        var b = changes[0];
        if (finer.Count == 0)
            return (b, [b.Before, .. b.Between, b.After]);
        var list = finer.Contains(b.Before) && finer.Contains(b.After) ? finer : SubjectOrder.ByVersion([.. finer.Union([b.Before, b.After])])
            ?? throw new InputException($"--subjects must hold both ends of the matrix's change ({b.Before} and {b.After}), or be versions of their kind");
        list = SubjectOrder.ByVersion(list) ?? list;
        int i = list.ToList().IndexOf(b.Before), j = list.ToList().IndexOf(b.After);
        if (i > j) (i, j) = (j, i);
        return (b, list.Skip(i).Take(j - i + 1).ToList());
    }
}

/// <summary>A bisect that has nothing to do: its ends have one outcome. Not bad input, so it exits 1.</summary>
public sealed class NoChangeException(string message) : Exception(message);
