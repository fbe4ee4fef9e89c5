using System.Text.Json.Nodes;
using Corpus.Harness.Model;
using Corpus.Harness.Report;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using SkiaSharp;

namespace Corpus.Harness.Tests;

/// <summary>The matrix of cells × subjects from fabricated verdicts: its table, its JSON, its picture.</summary>
public sealed class MatrixTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("corpus-matrix-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static CellResult Cell(string subject, Outcome outcome, object? facts, params string[] figures) =>
        new()
        {
            Key = new CellKey("roslyn-nested-attribute-blowup", "attribute", "bug", subject), Rerun = "make run …",
            Outcome = outcome, Detail = $"fake {outcome.Name()}", Family = "complexity", Seconds = 12.5,
            Verdict = new Verdict(outcome, $"fake {outcome.Name()}") { Facts = facts, KeyFigures = figures },
        };

    private static ComplexityFacts Facts(double? slope) =>
        new("exponential", "parse_s", "nesting levels", [[12, 0.7], [14, 2.9]], slope, slope, 0.99, 1.4, 1.15) { KilledAt = slope is null ? null : 16 };

    /// <summary>Two compilers on the nested-attribute cell, a race cell only mono runs, and net10 that cannot run it.</summary>
    private static MatrixTable Fabricated()
    {
        var cells = new List<CellResult>
        {
            Cell("roslyn:4.8.0", Outcome.Reproduced, Facts(1.62), "×1.62 per level (least squares ×1.58, r² 0.990)", "n=20 killed (timeout)"),
            Cell("roslyn:4.11.0", Outcome.Clean, Facts(null), "flat", "every size finished"),
            new()
            {
                Key = new CellKey("suppressfinalize-shutdown-race", "race", "bug", "roslyn:4.8.0"), Rerun = "r",
                Outcome = Outcome.Unsupported, Detail = "the subject is not installed here",
            },
        };
        return MatrixTable.From("run-1", [new("roslyn:4.8.0", "4.8.0-3.23524.11"), new("roslyn:4.11.0", "4.11.0")], cells,
                                (key, subject) => $"{subject} cannot run {key.Case}: it runs the compiler runner");
    }

    [Fact]
    public void TheTableGivesEachCellsOutcomeAndKeyFigurePerSubject()
    {
        var m = Fabricated();
        Assert.Equal(["roslyn-nested-attribute-blowup:attribute", "suppressfinalize-shutdown-race:race"], m.Rows.Select(r => r.Label));
        var text = m.Render().Split(Environment.NewLine);
        Assert.Contains("roslyn:4.8.0 (4.8.0-3.23524.11)", text[0]);
        Assert.Matches(@"^roslyn-nested-attribute-blowup:attribute\s+reproduced: ×1\.62 per level \(least squares ×1\.58, r² 0\.990\)\s+clean: flat$", text[2]);
        // The square with no cell says not applicable; an unsupported cell gives its reason.
        Assert.Matches(@"^suppressfinalize-shutdown-race:race\s+unsupported: the subject is not installed here\s+n/a: roslyn:4\.11\.0 cannot run race: it runs the compiler runner$", text[3]);
        var md = m.Markdown("matrix.png");
        Assert.Contains("| roslyn-nested-attribute-blowup:attribute | reproduced: ×1.62 per level (least squares ×1.58, r² 0.990) | clean: flat |", md);
        Assert.Contains("n/a (roslyn:4.11.0 cannot run race: it runs the compiler runner)", md);
        Assert.Contains("![matrix](matrix.png)", md);
    }

    [Fact]
    public void TheJsonCarriesTheTypedFactsAndReadsBack()
    {
        var m = Fabricated();
        m.Write(_dir);
        var json = JsonNode.Parse(File.ReadAllText(Path.Combine(_dir, MatrixTable.JsonFile)))!;
        Assert.Equal(1, json["schema"]!.GetValue<int>());
        var square = json["rows"]![0]!["squares"]![0]!;
        Assert.Equal("reproduced", square["outcome"]!.GetValue<string>());
        Assert.Equal("×1.62 per level (least squares ×1.58, r² 0.990)", square["keyFigure"]!.GetValue<string>());
        // The family's own facts, as facts.json has them: not text.
        Assert.Equal(1.62, square["facts"]!["slope"]!.GetValue<double>());
        Assert.Equal(16, square["facts"]!["killedAt"]!.GetValue<long>());
        var na = json["rows"]![1]!["squares"]![1]!;
        Assert.Null(na["outcome"]);
        Assert.False(na["applicable"]!.GetValue<bool>());

        var back = MatrixTable.Read(Path.Combine(_dir, MatrixTable.JsonFile));
        Assert.Equal(m.Rows.SelectMany(r => r.Squares.Select(q => (q.Subject, q.Outcome))), back.Rows.SelectMany(r => r.Squares.Select(q => (q.Subject, q.Outcome))));
        Assert.Equal("4.8.0-3.23524.11", back.Subjects[0].Version);
    }

    [Fact]
    public void ABrokenMatrixFileNamesTheField()
    {
        var file = Path.Combine(_dir, "matrix.json");
        File.WriteAllText(file, """{ "schema": 1, "runId": "r", "subjects": [], "rows": [ { "repro": "a", "case": "c", "variant": "bug", "squares": [ { "subject": "s", "outcome": "fixed" } ] } ] }""");
        var e = Assert.Throws<Json.InputException>(() => MatrixTable.Read(file));
        Assert.Contains("field 'rows[0].squares[0].outcome': unknown outcome 'fixed'", e.Message);
        File.WriteAllText(file, """{ "schema": 1, "runId": "r", "subjects": [ { "version": "1" } ], "rows": [] }""");
        Assert.Contains("field 'subjects[0].name' is missing", Assert.Throws<Json.InputException>(() => MatrixTable.Read(file)).Message);
    }

    [Fact]
    public void ThePictureHasAColouredSquarePerOutcome()
    {
        var m = Fabricated();
        var file = Path.Combine(_dir, "matrix.png");
        var at = MatrixPicture.Draw(m, file);
        using var bitmap = SKBitmap.Decode(file);
        Assert.NotNull(bitmap);
        // 2 rows × 2 subjects at 190 × 78 pixels a square, beside the labels.
        Assert.True(bitmap.Width >= 2 * 190 && bitmap.Height >= 2 * 78, $"{bitmap.Width}×{bitmap.Height}");
        string Hex(int r, int c) { var p = bitmap.GetPixel(at[r][c].X, at[r][c].Y); return $"#{p.Red:x2}{p.Green:x2}{p.Blue:x2}"; }
        Assert.Equal(MatrixPicture.Fill["reproduced"], Hex(0, 0));
        Assert.Equal(MatrixPicture.Fill["clean"], Hex(0, 1));
        Assert.Equal(MatrixPicture.Fill["unsupported"], Hex(1, 0));
        Assert.Equal(MatrixPicture.Fill[MatrixTable.NotApplicable], Hex(1, 1));
        // Text was written into the squares: the reproduced square holds pixels other than its fill.
        var (x0, y0) = at[0][0];
        var inks = Enumerable.Range(x0, 170).SelectMany(x => Enumerable.Range(y0 - 60, 55).Select(y => bitmap.GetPixel(x, y)))
                             .Count(p => p.Red > 240 && p.Green > 240 && p.Blue > 240);
        Assert.True(inks > 50, $"only {inks} white text pixels in the reproduced square");
    }

    [Fact]
    public void WrapKeepsWordsWhole()
    {
        Assert.Equal("×1.62 per level (least\nsquares ×1.58, r² 0.990)", MatrixPicture.Wrap("×1.62 per level (least squares ×1.58, r² 0.990)", 24));
        Assert.EndsWith("…", MatrixPicture.Wrap("one two three four five six seven", 9, 2));
    }

    [Fact]
    public void AnErrorOrAGateDifferenceFailsTheMatrixButAnUnsupportedCellDoesNot()
    {
        var clean = Cell("roslyn:4.11.0", Outcome.Clean, null);
        var unsupported = new CellResult { Key = new CellKey("a", "c", "bug", "mono"), Rerun = "r", Outcome = Outcome.Unsupported };
        Assert.Equal(0, MatrixCommand.Code([clean, unsupported], RunExit.Differs));
        var broken = new CellResult { Key = new CellKey("a", "c", "bug", "net10"), Rerun = "r", Outcome = Outcome.Error };
        Assert.Equal(1, MatrixCommand.Code([clean, broken], RunExit.Differs));
        var xpass = Cell("roslyn:4.8.0", Outcome.Clean, null);
        xpass.Gate = GateStatus.XPass;
        Assert.Equal(1, MatrixCommand.Code([xpass], RunExit.Differs));
        Assert.Equal(2, MatrixCommand.Code([clean], RunExit.InputError));
    }
}

/// <summary>Versions in order, and the start of a bisect from a matrix's change.</summary>
public sealed class MatrixBisectTests
{
    [Fact]
    public void VersionsOfOneKindAreOrderedByNumberNotText()
    {
        Assert.Equal(["net:8.0.9", "net:8.0.10", "net:9.0.23", "net:10.0.0-rc.1", "net:10.0.11"],
                     SubjectOrder.ByVersion(["net:10.0.11", "net:8.0.10", "net:9.0.23", "net:8.0.9", "net:10.0.0-rc.1"]));
        Assert.Equal(["roslyn:4.8.0", "roslyn:4.11.0"], SubjectOrder.ByVersion(["roslyn:4.11.0", "roslyn:4.8.0"]));
        // Two kinds, or a path, have no version order: the given order stands.
        Assert.Null(SubjectOrder.ByVersion(["net:8.0.0", "wine-net:8.0.30"]));
        Assert.Null(SubjectOrder.ByVersion(["coreclr:/opt/a", "coreclr:/opt/b"]));
    }

    private static MatrixTable Matrix(params (string Subject, Outcome? Outcome)[] squares) =>
        new("m1", squares.Select(s => new MatrixSubject(s.Subject, null)).ToList(),
            [new MatrixRow("roslyn-nested-attribute-blowup", "attribute", "bug",
                           squares.Select(s => new MatrixSquare(s.Subject, s.Outcome, null, "", null, null, null, null, null)).ToList())]);

    [Fact]
    public void TheRangeIsTheLastSubjectWithOneOutcomeAndTheFirstWithTheOther()
    {
        var m = Matrix(("roslyn:4.5.0", Outcome.Reproduced), ("roslyn:4.8.0", Outcome.Reproduced), ("roslyn:5.9.0", Outcome.Unsupported),
                       ("roslyn:5.12.0", Outcome.Clean));
        var (b, subjects) = MatrixBisect.Plan(m, null, null, null, []);
        Assert.Equal(("roslyn:4.8.0", "roslyn:5.12.0"), (b.Before, b.After));
        Assert.Equal(["roslyn:4.8.0", "roslyn:5.9.0", "roslyn:5.12.0"], subjects);
        // A finer list is cut to the range and put in version order.
        (_, subjects) = MatrixBisect.Plan(m, null, null, null, ["roslyn:5.0.0", "roslyn:4.3.1", "roslyn:4.11.0", "roslyn:4.14.0"]);
        Assert.Equal(["roslyn:4.8.0", "roslyn:4.11.0", "roslyn:4.14.0", "roslyn:5.0.0", "roslyn:5.12.0"], subjects);
    }

    /// <summary>The nested-attribute blowup came with 4.3.1 and went with 4.11.0: --subjects picks the change it spans.</summary>
    [Fact]
    public void ARowThatChangesTwiceNeedsSubjectsThatSpanOneChange()
    {
        var m = Matrix(("roslyn:3.6.0", Outcome.Clean), ("roslyn:4.3.1", Outcome.Reproduced), ("roslyn:4.8.0", Outcome.Reproduced),
                       ("roslyn:4.11.0", Outcome.Clean), ("roslyn:5.12.0", Outcome.Clean));
        var e = Assert.Throws<Json.InputException>(() => MatrixBisect.Plan(m, null, null, null, []));
        Assert.Contains("changes outcome 2 times: roslyn-nested-attribute-blowup:attribute/bug roslyn:3.6.0 (clean) → roslyn:4.3.1 (reproduced), "
                        + "roslyn-nested-attribute-blowup:attribute/bug roslyn:4.8.0 (reproduced) → roslyn:4.11.0 (clean)", e.Message);
        var (b, subjects) = MatrixBisect.Plan(m, null, null, null, ["roslyn:4.5.0", "roslyn:4.8.0", "roslyn:4.11.0", "roslyn:4.14.0"]);
        Assert.Equal(("roslyn:4.8.0", "roslyn:4.11.0"), (b.Before, b.After));
        Assert.Equal(["roslyn:4.8.0", "roslyn:4.11.0"], subjects);
    }

    [Fact]
    public void AMatrixWithoutAChangeHasNothingToBisect()
    {
        var m = Matrix(("roslyn:4.11.0", Outcome.Clean), ("roslyn:5.0.0", Outcome.Unsupported), ("roslyn:5.12.0", Outcome.Clean));
        var e = Assert.Throws<NoChangeException>(() => MatrixBisect.Plan(m, null, null, null, []));
        Assert.Contains("no change in matrix run m1", e.Message);
        Assert.Throws<Json.InputException>(() => MatrixBisect.Plan(m, "other-repro", null, null, []));
    }
}
