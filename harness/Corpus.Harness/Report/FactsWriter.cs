using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;

namespace Corpus.Harness.Report;

/// <summary>
/// facts.json: a cell's facts as data (schema in docs/architecture.md): its family's verdict and typed facts, every
/// evidence check's, the captures with their threads and heap counts, and the cell's files. Pester assertions, build
/// comparisons and labs read this file instead of parsing the detail text.
/// </summary>
public static class FactsWriter
{
    public const int SchemaVersion = 1;
    public const string FileName = "facts.json";

    public static readonly JsonSerializerOptions JsonOptions = new()
    {
        WriteIndented = true,
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    private static string Camel(string s) => s.Length == 0 ? s : char.ToLowerInvariant(s[0]) + s[1..];

    public static object Json(CellResult c, string root)
    {
        string Rel(string path) => Path.GetRelativePath(root, path);
        return new Dictionary<string, object?>
        {
            ["schema"] = SchemaVersion,
            ["cell"] = new { repro = c.Key.Repro, @case = c.Key.Case, variant = c.Key.Variant, subject = c.Key.Subject },
            ["outcome"] = c.Outcome.Name(),
            ["expected"] = c.Expected?.Outcome.Name(),
            ["gate"] = c.Gate.ToString().ToLowerInvariant(),
            ["detail"] = c.Detail,
            ["keyFigures"] = c.KeyFigures,
            ["seconds"] = c.Seconds,
            ["rerun"] = c.Rerun,
            ["family"] = c.Verdict is not { } v ? null : new
            {
                key = c.Family, outcome = v.Outcome.Name(), detail = v.Detail, facts = v.Facts, keyFigures = v.KeyFigures,
                plot = v.Plot == PlotScale.None ? null : Camel(v.Plot.ToString()), plotLabel = v.PlotLabel, hitRun = v.HitRun,
            },
            ["evidence"] = c.Evidence.Select(e => new { key = e.Key, status = Camel(e.Status.ToString()), detail = e.Detail, facts = e.Facts, keyFigures = e.KeyFigures }),
            ["metrics"] = c.Metrics,
            ["runs"] = c.Runs.Select(r => new
            {
                label = r.Label, status = r.Status, wallSeconds = r.WallSeconds, peakMB = Math.Round(r.PeakBytes / 1048576.0, 1),
                captureOnly = r.CaptureOnly, metrics = r.Metrics, n = r.N,
            }),
            ["captures"] = c.Captures.Select(x => new
            {
                backend = x.Backend, run = x.Run, file = Rel(x.File), bytes = x.Bytes, seconds = x.Seconds, atSeconds = x.AtSeconds,
                note = x.Note, deletedOverCap = x.DeletedOverCap,
                threads = x.Threads.Select(t => new { thread = t.Thread, crashing = t.Crashing, frames = t.Frames }),
                heap = x.HeapCounts,
            }),
            ["captureErrors"] = c.CaptureErrors,
            ["traces"] = c.Traces.Select(t => SummaryWriter.TraceJson(t, root)),
            ["artifacts"] = c.ArtifactDir is null ? null : new
            {
                dir = Rel(c.ArtifactDir),
                files = Directory.Exists(c.ArtifactDir)
                    ? Directory.EnumerateFiles(c.ArtifactDir, "*", SearchOption.AllDirectories).Order(StringComparer.Ordinal)
                               .Select(f => new { path = Rel(f), bytes = new FileInfo(f).Length }).ToList()
                    : null,
            },
        };
    }

    public static void Write(CellResult c, string root, string dir) =>
        File.WriteAllText(Path.Combine(dir, FileName), JsonSerializer.Serialize(Json(c, root), JsonOptions));
}
