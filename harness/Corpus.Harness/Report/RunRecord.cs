using System.Text.Json;
using Corpus.Harness.Capture;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Report;

/// <summary>
/// A finished run read back from its records: summary.json lists the cells, and each cell's facts.json gives it as the
/// run had it in memory, so the same writers (summary, JUnit, report, table) render them again. What the records do not
/// hold (crash facts read from cores) is not needed by any writer.
/// </summary>
public sealed class RunRecord
{
    public required string Dir { get; init; }
    public required string RunId { get; init; }
    public required string Host { get; init; }
    public required double Seconds { get; init; }
    public required JsonElement Summary { get; init; }
    public required IReadOnlyList<string> InputErrors { get; init; }

    /// <summary>A run: a folder holding summary.json, or a run id under artifacts/.</summary>
    public static RunRecord Load(string root, string run)
    {
        var dir = Directory.Exists(run) && System.IO.File.Exists(Path.Combine(run, "summary.json")) ? run : Path.Combine(root, "artifacts", run);
        var file = Path.Combine(dir, "summary.json");
        if (!System.IO.File.Exists(file))
            throw new InputException($"run '{run}': no summary.json in {run} or in {Path.GetRelativePath(root, dir)} (give a run folder or a run id under artifacts/)");
        JsonElement doc;
        try { doc = JsonDocument.Parse(System.IO.File.ReadAllText(file)).RootElement.Clone(); }
        catch (JsonException e) { throw new InputException(file, "(syntax)", e.Message); }
        var schema = doc.TryGetProperty("schema", out var s) && s.ValueKind == JsonValueKind.Number ? s.GetInt32() : -1;
        if (schema != SummaryWriter.SchemaVersion)
            throw new InputException(file, "schema", $"must be {SummaryWriter.SchemaVersion}, found {(schema < 0 ? "none" : schema)}");
        void Expect(JsonElement parent, string field, JsonValueKind kind, string path, bool nullable = false)
        {
            if (!parent.TryGetProperty(field, out var v) || (v.ValueKind != kind && !(nullable && v.ValueKind == JsonValueKind.Null)))
                throw new InputException(file, path, $"missing or not {kind.ToString().ToLowerInvariant()}: not a summary a run wrote");
        }
        Expect(doc, "runId", JsonValueKind.String, "runId");
        Expect(doc, "host", JsonValueKind.String, "host");
        Expect(doc, "seconds", JsonValueKind.Number, "seconds");
        Expect(doc, "inputErrors", JsonValueKind.Array, "inputErrors");
        Expect(doc, "cells", JsonValueKind.Array, "cells");
        if (doc.TryGetProperty("shard", out var shard) && shard.ValueKind == JsonValueKind.Object)
        {
            Expect(shard, "index", JsonValueKind.Number, "shard.index");
            Expect(shard, "count", JsonValueKind.Number, "shard.count");
            Expect(shard, "selection", JsonValueKind.Array, "shard.selection");
            Expect(doc, "checkout", JsonValueKind.Object, "checkout");
            var checkout = doc.GetProperty("checkout");
            Expect(checkout, "commit", JsonValueKind.String, "checkout.commit", nullable: true);
            Expect(checkout, "expected", JsonValueKind.String, "checkout.expected");
            Expect(checkout, "manifests", JsonValueKind.String, "checkout.manifests");
        }
        return new RunRecord
        {
            Dir = Path.GetFullPath(dir), RunId = doc.GetProperty("runId").GetString()!, Host = doc.GetProperty("host").GetString()!,
            Seconds = doc.GetProperty("seconds").GetDouble(), Summary = doc,
            InputErrors = doc.GetProperty("inputErrors").EnumerateArray().Select(e => e.GetString()!).ToList(),
        };
    }

    public string File => Path.Combine(Dir, "summary.json");

    public JsonElement? Block(string name) =>
        Summary.TryGetProperty(name, out var v) && v.ValueKind != JsonValueKind.Null ? v : null;

    public IEnumerable<JsonElement> Cells => Summary.GetProperty("cells").EnumerateArray();

    /// <summary>One field of the checkout the run judged against (commit, expected, manifests); null when not recorded.</summary>
    public string? CheckoutField(string field) =>
        Block("checkout") is { } c && c.TryGetProperty(field, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;

    /// <summary>The path a record names (relative to its run's root, under artifacts/RUN-ID/), inside this run's folder.</summary>
    public string? Local(string? recorded)
    {
        if (recorded is null) return null;
        var prefix = $"artifacts/{RunId}/";
        var rel = recorded.Replace('\\', '/');
        if (!rel.StartsWith(prefix, StringComparison.Ordinal))
            throw new InputException(File, "cells", $"'{recorded}' is not under {prefix}: the run was moved or written by another tool");
        return Path.Combine(Dir, rel[prefix.Length..]);
    }

    /// <summary>A phase's seconds from facts.json ("phases"), 0 when the record has none.</summary>
    private static double Phase(JsonElement facts, string name) =>
        facts.TryGetProperty("phases", out var p) && p.ValueKind == JsonValueKind.Object && p.TryGetProperty(name, out var v) ? v.GetDouble() : 0;

    /// <summary>
    /// One cell as the run had it, moved to <paramref name="movedTo"/> (a run folder relative to
    /// <paramref name="root"/>, "artifacts/RUN-ID/"): every path and text that named this run's folder names that one.
    /// </summary>
    public CellResult Cell(JsonElement recorded, string root, string movedTo)
    {
        string Str(JsonElement e, string name) => e.GetProperty(name).GetString()!;
        string? Opt(JsonElement e, string name) => e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;
        var key = new CellKey(Str(recorded, "repro"), Str(recorded, "case"), Str(recorded, "variant"), Str(recorded, "subject"));
        var factsPath = Local(Opt(recorded, "facts")) ?? throw new InputException(File, "cells", $"{key}: no facts.json is named");
        if (!System.IO.File.Exists(factsPath)) throw new InputException(File, "cells", $"{key}: {factsPath} is missing");
        // The run's folder name is plain text in JSON (no character of it is escaped), so a textual move is exact.
        JsonElement Move(string json) => JsonDocument.Parse(json.Replace($"artifacts/{RunId}/", movedTo)).RootElement.Clone();
        var facts = Move(System.IO.File.ReadAllText(factsPath));
        string? At(string? path) => path is null ? null : Path.GetFullPath(path, root);
        var artifacts = facts.GetProperty("artifacts") is { ValueKind: JsonValueKind.Object } a ? At(Opt(a, "dir")) : null;
        var expected = Opt(facts, "expected") is { } e
            ? new Expectation(key, Outcomes.ByName[e], Opt(facts, "expectedReason") ?? "", Opt(facts, "reference")) : null;
        var family = facts.GetProperty("family");
        var cell = new CellResult
        {
            Key = key, Rerun = Str(facts, "rerun"), ArtifactDir = artifacts,
            // Where the cell's records are once moved (a merge copies them there).
            RecordDir = Path.GetDirectoryName(At(Opt(recorded, "facts")!.Replace($"artifacts/{RunId}/", movedTo)))!,
            Outcome = Outcomes.ByName[Str(facts, "outcome")], Detail = Str(facts, "detail"), Expected = expected,
            Gate = Enum.Parse<GateStatus>(Str(facts, "gate"), ignoreCase: true), GateMessage = Str(facts, "gateMessage"),
            Seconds = facts.GetProperty("seconds").GetDouble(), Family = family.ValueKind == JsonValueKind.Object ? Opt(family, "key") : null,
            Lane = facts.TryGetProperty("lane", out var lane) ? Opt(facts, "lane") : null,
            StartedAt = facts.TryGetProperty("startedAt", out var at) && at.ValueKind == JsonValueKind.Number ? at.GetDouble() : null,
            BuildSeconds = Phase(facts, "build"), ProvisionSeconds = Phase(facts, "provision"),
            Runtime = Opt(facts, "runtime"), Isolation = Opt(facts, "isolation"),
            Env = Env(facts.GetProperty("env")), InheritedEnv = Env(facts.GetProperty("inheritedEnv")),
            Fixture = facts.GetProperty("fixture") is { ValueKind: JsonValueKind.Object } fx
                ? fx.Deserialize<Fixtures.FixtureFacts>(FactsWriter.JsonOptions) : null,
        };
        if (facts.GetProperty("series") is { ValueKind: JsonValueKind.Object } series)
        {
            cell.SeriesMetric = Opt(series, "metric");
            cell.SeriesUnit = Opt(series, "unit");
            cell.Series.AddRange(Points(series.GetProperty("points")));
        }
        if (facts.GetProperty("timeSeries") is { ValueKind: JsonValueKind.Object } time)
            foreach (var curve in time.EnumerateObject()) cell.TimeSeries[curve.Name] = Points(curve.Value);
        foreach (var r in facts.GetProperty("runs").EnumerateArray())
        {
            var metrics = ProgramMetrics.Read(r.GetProperty("metrics"));
            cell.Runs.Add(new RunSummary(Str(r, "label"), Str(r, "status"), r.GetProperty("wallSeconds").GetDouble(),
                                         (long)Math.Round(r.GetProperty("peakMB").GetDouble() * 1048576), metrics, Str(r, "containment"))
            {
                CaptureOnly = r.GetProperty("captureOnly").GetBoolean(),
                N = r.TryGetProperty("n", out var n) && n.ValueKind == JsonValueKind.Number ? n.GetInt64() : null,
                ExitedZero = r.GetProperty("exitedZero").GetBoolean(),
                CpuSeconds = r.TryGetProperty("cpuSeconds", out var cpu) && cpu.ValueKind == JsonValueKind.Number ? cpu.GetDouble() : null,
            });
        }
        foreach (var x in facts.GetProperty("captures").EnumerateArray())
        {
            var threads = x.GetProperty("threads").EnumerateArray().Select(t => new ThreadStack(Str(t, "thread"),
                              t.GetProperty("frames").EnumerateArray().Select(fr => fr.GetString()!).ToList()) { Crashing = t.GetProperty("crashing").GetBoolean() }).ToList();
            var heap = x.GetProperty("heap") is { ValueKind: JsonValueKind.Object } h
                ? h.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetInt64()) : null;
            cell.Captures.Add(new CaptureRecord(Str(x, "backend"), At(Str(x, "file"))!,
                                                x.GetProperty("bytes").GetInt64(), x.GetProperty("seconds").GetDouble(),
                                                x.GetProperty("atSeconds").GetDouble(), threads, Opt(x, "note"), heap)
            { Run = Opt(x, "run"), DeletedOverCap = x.GetProperty("deletedOverCap").GetBoolean() });
        }
        cell.CaptureErrors.AddRange(facts.GetProperty("captureErrors").EnumerateArray().Select(e => e.GetString()!));
        if (facts.TryGetProperty("launchRetries", out var retries))
            cell.LaunchRetries.AddRange(retries.EnumerateArray().Select(e => e.GetString()!));
        foreach (var t in facts.GetProperty("traces").EnumerateArray())
        {
            double? D(string name) => t.GetProperty(name) is { ValueKind: JsonValueKind.Number } v ? v.GetDouble() : null;
            cell.Traces.Add(new Capture.Traces.TraceRecord(Str(t, "backend"), Str(t, "kind"), Str(t, "run"),
                t.GetProperty("n") is { ValueKind: JsonValueKind.Number } tn ? tn.GetInt64() : null, At(Opt(t, "file")),
                t.GetProperty("bytes").GetInt64(), t.GetProperty("samples").GetInt32(), t.GetProperty("events").GetInt32(),
                t.GetProperty("wallSeconds").GetDouble(), D("untracedWallSeconds"), D("slowdown"), D("metricSlowdown"),
                At(Opt(t, "speedscope")), At(Opt(t, "flameGraph")), Opt(t, "error"))
                { Note = Opt(t, "note"), ReadSeconds = t.GetProperty("readSeconds").GetDouble() });
        }
        if (family.ValueKind == JsonValueKind.Object && Opt(family, "outcome") is { } decided)
            cell.Verdict = new Verdict(Outcomes.ByName[decided], Str(family, "detail"))
            {
                Facts = family.GetProperty("facts"), KeyFigures = Strings(family.GetProperty("keyFigures")),
                Plot = Opt(family, "plot") is { } plot ? Enum.Parse<PlotScale>(plot, ignoreCase: true) : PlotScale.None,
                PlotLabel = Opt(family, "plotLabel"), HitRun = Opt(family, "hitRun"),
            };
        foreach (var ev in facts.GetProperty("evidence").EnumerateArray())
            cell.Evidence.Add(new EvidenceResult(Str(ev, "key"), Enum.Parse<EvidenceStatus>(Str(ev, "status"), ignoreCase: true), Str(ev, "detail"))
            { Facts = ev.GetProperty("facts"), KeyFigures = Strings(ev.GetProperty("keyFigures")) });
        return cell;
    }

    private static List<string> Strings(JsonElement a) => a.EnumerateArray().Select(e => e.GetString()!).ToList();

    private static List<SeriesPoint> Points(JsonElement a) =>
        a.EnumerateArray().Select(p => new SeriesPoint(p[0].GetDouble(), p[1].GetDouble())).ToList();

    /// <summary>Variables as the record has them: an object of strings, or null.</summary>
    private static IReadOnlyDictionary<string, string>? Env(JsonElement v) =>
        v.ValueKind == JsonValueKind.Object ? v.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetString()!) : null;
}
