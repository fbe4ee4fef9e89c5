using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Report;

/// <summary>One subject of a matrix: its name and the version it resolved to (null when unknown or unavailable).</summary>
public sealed record MatrixSubject(string Name, string? Version);

/// <summary>
/// One square: a cell on one subject. <see cref="Outcome"/> is null when the subject cannot run the cell (not
/// applicable), with the reason in <see cref="Detail"/>. <see cref="KeyFigure"/> is the verdict's first key figure,
/// the one each family puts first (rate, exponent or factor per level, hang length…).
/// </summary>
public sealed record MatrixSquare(string Subject, Outcome? Outcome, string? KeyFigure, string Detail, Outcome? Expected,
                                  GateStatus? Gate, double? Seconds, string? Family, object? Facts)
{
    public bool Applicable => Outcome is not null;
    public string OutcomeText => Outcome?.Name() ?? MatrixTable.NotApplicable;
}

/// <summary>One row: a (repro, case, variant) across the matrix's subjects, in their order.</summary>
public sealed record MatrixRow(string Repro, string Case, string Variant, IReadOnlyList<MatrixSquare> Squares)
{
    public string Label => $"{Repro}:{Case}" + (Variant == "bug" ? "" : $"/{Variant}");
}

/// <summary>
/// Cells × subjects: which subjects (versions) have which bug. Built from the cells of one run; a cell that a
/// subject cannot run (its program type, a display…) is a square that says not applicable and why.
/// </summary>
public sealed record MatrixTable(string RunId, IReadOnlyList<MatrixSubject> Subjects, IReadOnlyList<MatrixRow> Rows)
{
    public const int SchemaVersion = 1;
    public const string NotApplicable = "n/a";
    public const string JsonFile = "matrix.json", MarkdownFile = "matrix.md", PictureFile = "matrix.png";

    /// <param name="notApplicable">Why a subject cannot run a row's cell; called only for squares with no cell.</param>
    public static MatrixTable From(string runId, IReadOnlyList<MatrixSubject> subjects, IReadOnlyList<CellResult> cells,
                                   Func<CellKey, string, string> notApplicable)
    {
        var rows = cells.Select(c => (c.Key.Repro, c.Key.Case, c.Key.Variant)).Distinct().Select(r =>
        {
            var squares = subjects.Select(s =>
            {
                var key = new CellKey(r.Repro, r.Case, r.Variant, s.Name);
                var c = cells.FirstOrDefault(x => x.Key == key);
                return c is null
                    ? new MatrixSquare(s.Name, null, null, notApplicable(key, s.Name), null, null, null, null, null)
                    : new MatrixSquare(s.Name, c.Outcome, c.Verdict?.KeyFigures.FirstOrDefault(), c.Detail, c.Expected?.Outcome,
                                       c.Gate, c.Seconds, c.Family, c.Verdict?.Facts);
            }).ToList();
            return new MatrixRow(r.Repro, r.Case, r.Variant, squares);
        }).ToList();
        return new MatrixTable(runId, subjects, rows);
    }

    /// <summary>What a square says in a table: the outcome and its key figure, or for a cell that never ran the reason.</summary>
    public static string Text(MatrixSquare q) =>
        q.KeyFigure is { } k ? $"{q.OutcomeText}: {k}"
        : q.Outcome is Model.Outcome.Reproduced or Model.Outcome.Clean || q.Detail.Length == 0 ? q.OutcomeText
        : $"{q.OutcomeText}: {FirstLine(q.Detail, 60)}";

    private static string FirstLine(string s, int max)
    {
        var line = s.Split('\n')[0].Trim();
        return line.Length <= max ? line : line[..(max - 1)] + "…";
    }

    public static string Header(MatrixSubject s) => s.Version is { } v && !s.Name.Contains(v) ? $"{s.Name} ({v})" : s.Name;

    /// <summary>The console table: one line per cell, one column per subject.</summary>
    public string Render()
    {
        var head = new[] { "repro:case" }.Concat(Subjects.Select(Header)).ToArray();
        var rows = Rows.Select(r => new[] { r.Label }.Concat(r.Squares.Select(Text)).ToArray()).ToList();
        var widths = head.Select((h, i) => Math.Max(h.Length, rows.Select(r => r[i].Length).DefaultIfEmpty(0).Max())).ToArray();
        string Line(string[] r) => string.Join("  ", r.Select((s, i) => s.PadRight(widths[i]))).TrimEnd();
        return string.Join(Environment.NewLine,
            new[] { Line(head), Line(widths.Select(w => new string('-', w)).ToArray()) }.Concat(rows.Select(Line)));
    }

    public string Markdown(string? picture)
    {
        var md = new StringBuilder($"# Matrix of run {RunId}\n\n");
        md.AppendLine($"{Rows.Count} cells × {Subjects.Count} subjects. Each square: the outcome and the verdict's first key figure; "
                      + $"`{NotApplicable}` where the subject cannot run the cell.").AppendLine();
        if (picture is not null) md.AppendLine($"![matrix]({picture})").AppendLine();
        string Esc(string s) => s.Replace("|", "\\|").Replace("\n", " ");
        md.AppendLine("| repro:case | " + string.Join(" | ", Subjects.Select(s => Esc(Header(s)))) + " |");
        md.AppendLine("|---|" + string.Concat(Subjects.Select(_ => "---|")));
        foreach (var r in Rows)
            md.AppendLine($"| {Esc(r.Label)} | " + string.Join(" | ", r.Squares.Select(q =>
                Esc(q.Outcome is null ? $"{NotApplicable} ({q.Detail})"
                    : Text(q) + (q.Gate is { } gate && gate.Fails() ? $" **{q.Gate.ToString()!.ToUpperInvariant()}**" : ""))))
                + " |");
        return md.ToString();
    }

    public JsonObject Json()
    {
        JsonNode? F(object? o) => o is null ? null : JsonSerializer.SerializeToNode(o, o.GetType(), FactsWriter.JsonOptions);
        return new JsonObject
        {
            ["schema"] = SchemaVersion,
            ["runId"] = RunId,
            ["subjects"] = new JsonArray(Subjects.Select(s => (JsonNode)new JsonObject { ["name"] = s.Name, ["version"] = s.Version }).ToArray()),
            ["rows"] = new JsonArray(Rows.Select(r => (JsonNode)new JsonObject
            {
                ["repro"] = r.Repro, ["case"] = r.Case, ["variant"] = r.Variant,
                ["squares"] = new JsonArray(r.Squares.Select(q => (JsonNode)new JsonObject
                {
                    ["subject"] = q.Subject,
                    ["outcome"] = q.Outcome?.Name(),
                    ["applicable"] = q.Applicable,
                    ["keyFigure"] = q.KeyFigure,
                    ["detail"] = q.Detail,
                    ["expected"] = q.Expected?.Name(),
                    ["gate"] = q.Gate?.ToString().ToLowerInvariant(),
                    ["seconds"] = q.Seconds,
                    ["family"] = q.Family,
                    ["facts"] = F(q.Facts),
                }).ToArray()),
            }).ToArray()),
        };
    }

    /// <summary>matrix.json, matrix.md and matrix.png in the run's folder; the picture is left out (and said so) if it cannot be drawn.</summary>
    public void Write(string runDir, Action<string>? warn = null)
    {
        File.WriteAllText(Path.Combine(runDir, JsonFile), Json().ToJsonString(FactsWriter.JsonOptions));
        string? picture = null;
        try
        {
            MatrixPicture.Draw(this, Path.Combine(runDir, PictureFile));
            picture = PictureFile;
        }
        // SkiaSharp's native library may be missing on an unusual host; the table still stands.
        catch (Exception e) when (e is DllNotFoundException or TypeInitializationException or IOException)
        {
            warn?.Invoke($"matrix.png not drawn: {e.Message}");
        }
        File.WriteAllText(Path.Combine(runDir, MarkdownFile), Markdown(picture));
    }

    /// <summary>Reads a matrix.json back (bisect --from); every missing field is an input error that names it.</summary>
    public static MatrixTable Read(string file)
    {
        JsonNode? doc;
        try { doc = JsonNode.Parse(File.ReadAllText(file)); }
        catch (JsonException e) { throw new Json.InputException($"{file}: not JSON: {e.Message}"); }
        string Need(JsonNode? n, string field) =>
            n?[field.Split('.')[^1]]?.GetValue<string>() ?? throw new Json.InputException($"{file}: field '{field}' is missing");
        if (doc?["schema"]?.GetValue<int>() != SchemaVersion)
            throw new Json.InputException($"{file}: field 'schema' must be {SchemaVersion}");
        var subjects = (doc["subjects"] as JsonArray ?? throw new Json.InputException($"{file}: field 'subjects' is missing"))
            .Select((s, i) => new MatrixSubject(Need(s, $"subjects[{i}].name"), s?["version"]?.GetValue<string>())).ToList();
        var rows = (doc["rows"] as JsonArray ?? throw new Json.InputException($"{file}: field 'rows' is missing")).Select((r, i) =>
        {
            var squares = (r?["squares"] as JsonArray ?? throw new Json.InputException($"{file}: field 'rows[{i}].squares' is missing"))
                .Select((q, j) =>
                {
                    var o = q?["outcome"]?.GetValue<string>();
                    Outcome? outcome = o is null ? null : Outcomes.ByName.TryGetValue(o, out var x) ? x
                        : throw new Json.InputException($"{file}: field 'rows[{i}].squares[{j}].outcome': unknown outcome '{o}'");
                    return new MatrixSquare(Need(q, $"rows[{i}].squares[{j}].subject"), outcome, q?["keyFigure"]?.GetValue<string>(),
                                            q?["detail"]?.GetValue<string>() ?? "", null, null, null, q?["family"]?.GetValue<string>(), null);
                }).ToList();
            return new MatrixRow(Need(r, $"rows[{i}].repro"), Need(r, $"rows[{i}].case"), Need(r, $"rows[{i}].variant"), squares);
        }).ToList();
        return new MatrixTable(Need(doc, "runId"), subjects, rows);
    }
}
